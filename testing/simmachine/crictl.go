package simmachine

import (
	"fmt"
	"strings"
)

// Crictl is what crictl (kubernetes-sigs/cri-tools) run as exe by an account
// whose profile is userProfile makes of its configuration: the file it
// reads and the runtime endpoint it names. crictl's --config defaults on
// Windows to %USERPROFILE%\.crictl\crictl.yaml (cmd/crictl/main_windows.go);
// when that file does not exist it reads the crictl.yaml of its own
// directory (pkg/common/config.go, GetServerConfigFromFile: "the config file
// is placed with the cri tools binary"). With neither, it has no endpoint of
// its own and tries its deprecated defaults in turn, warning each time
// (cmd/crictl/main.go): the error says so.
func (m *Machine) Crictl(exe, userProfile string) (config, endpoint string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fact("file:"+exe) == "" {
		return "", "", fmt.Errorf("%s is not recognized as the name of a cmdlet, function, script file, or operable program", exe)
	}
	dir := exe[:strings.LastIndexByte(exe, '\\')]
	for _, path := range []string{userProfile + `\.crictl\crictl.yaml`, dir + `\crictl.yaml`} {
		text := m.fact("file:" + path)
		if text == "" {
			continue
		}
		for _, line := range strings.Split(text, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "runtime-endpoint:"); ok {
				return path, strings.TrimSpace(v), nil
			}
		}
		return path, "", fmt.Errorf("%s names no runtime-endpoint: runtime connect using default endpoints (deprecated)", path)
	}
	return "", "", fmt.Errorf(`Config %q does not exist, trying next: %q; runtime connect using default endpoints (deprecated)`, userProfile+`\.crictl\crictl.yaml`, dir+`\crictl.yaml`)
}
