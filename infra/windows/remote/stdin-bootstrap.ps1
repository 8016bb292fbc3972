# stdin-script: base64-utf8
# The script is too long for a command line: the base64 of its UTF-8 text comes on stdin.
$encoded = $input | Out-String
$script = [Text.Encoding]::UTF8.GetString([Convert]::FromBase64String($encoded))
& ([ScriptBlock]::Create($script))
$ok = $?
if ($LASTEXITCODE) { exit $LASTEXITCODE }
if (-not $ok) { exit 1 }
