# winconform-step: images
# parameters: Image, Archive, Pull, Ctr
# Puts $Image in containerd's images for Kubernetes (the k8s.io namespace,
# which the CRI and so the kubelet use) before the node needs it, for a lab
# whose machines reach no public registry: it imports $Archive (an archive
# of images, from ctr images export or docker save; a URL or a path on the
# machine) when it is given, then, when $Pull is true, pulls what is still
# missing with ctr from where $Image points (the image overrides' mirror).
# ctr pulls and imports the variant of the machine's own Windows. Nothing
# changes when $Image is there.
function Test-Image {
    $r = Invoke-Native -FilePath $Ctr -ArgumentList @('-n', 'k8s.io', 'images', 'ls', '-q')
    if ($r.ExitCode -ne 0) { throw "ctr images ls failed: $($r.Output -join '; ')" }
    @($r.Output | ForEach-Object { "$_".Trim() }) -contains $Image
}

$how = 'present'
if (-not (Test-Image)) {
    if ($Archive -ne '') {
        $file = Get-SourceFile -Source $Archive -Destination (Join-Path (New-WorkDir 'images') (Get-SourceName $Archive))
        $r = Invoke-Native -FilePath $Ctr -ArgumentList @('-n', 'k8s.io', 'images', 'import', $file)
        if ($r.ExitCode -ne 0) { throw "ctr images import $Archive failed: $($r.Output -join '; ')" }
        $how = 'imported'
    }
    if (-not (Test-Image)) {
        if ($Pull -ne 'true') {
            throw "$Image is not in containerd's images (namespace k8s.io), and $Archive does not hold it: add it to the archive (ctr -n k8s.io images export, or docker save, where it is), or let the node pull it from a registry it reaches (prepullImages)"
        }
        $r = Invoke-Native -FilePath $Ctr -ArgumentList @('-n', 'k8s.io', 'images', 'pull', $Image)
        if ($r.ExitCode -ne 0) { throw "ctr images pull $Image failed: $(@($r.Output | Select-Object -Last 5) -join '; ')" }
        $how = 'pulled'
    }
}
Write-Status ([ordered]@{ changed = ($how -ne 'present'); image = $Image; how = $how })
