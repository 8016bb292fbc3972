package simmachine

import (
	"strings"

	"github.com/winconform/winconform/testing/steptest"
)

// refused checks what a case does against what Windows refuses, before the
// machine takes it: the error the step fails with, "" when Windows lets it.
// m.mu must be held.
func (r *run) refused(c steptest.Case) string {
	for _, check := range []func(steptest.Case) string{r.heldFiles, r.defenderStopped, r.containerdRefuses} {
		if msg := check(c); msg != "" {
			return msg
		}
	}
	return ""
}

// defenderStopped: while Microsoft Defender's service (WinDefend) is not
// running, its cmdlets fail: Get-MpPreference and Add-MpPreference throw a
// CimException, HRESULT 0x800106ba (MicrosoftDocs/windows-powershell-docs
// #3283 on Windows Server 2019; clong/DetectionLab#715 checks the service
// before calling them; kubernetes' cluster/gce/windows/k8s-node-setup.psm1
// asks whether the Windows-Defender feature is installed first). A case that
// reads or changes Defender's exclusions on such a machine fails so.
func (r *run) defenderStopped(c steptest.Case) string {
	if r.m.fact("defender:available") == "" || strings.HasSuffix(r.m.fact("service:WinDefend"), "/Running") {
		return ""
	}
	for _, facts := range []map[string]string{c.Given, c.Sets} {
		for k := range facts {
			if strings.HasPrefix(k, "defender:paths") || strings.HasPrefix(k, "defender:processes") {
				return "Get-MpPreference : Operation failed with the following error: 0x800106ba. Operation: MpPreference. Target: MSFT_MpPreference."
			}
		}
	}
	return ""
}
