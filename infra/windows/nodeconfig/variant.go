package nodeconfig

import "github.com/winconform/winconform/internal/winrelease"

// Which variant of a multi-platform image the node's containerd runs, as
// containerd's platform matching decides it (github.com/containerd/platforms,
// at the version each containerd pins). Its tests hold Compatible to the
// matcher of the version containerd 2.3 pins, run here.
//
// Windows runs a container with process isolation, the only isolation
// Kubernetes uses, when its build is one the host's runs: the host's own
// before Windows Server 2022; from 2022 on, Windows' stable ABI lets a host
// run containers from an earlier LTSC build up to its own
// (learn.microsoft.com, "Windows container version compatibility"). How far
// back depends on containerd's list of LTSC builds and its reading of it:
//
//   - containerd 1.7 (platforms v0.2.1, platform_compat_windows.go): LTSC
//     builds [20348]; a host of build >= 20348 runs containers from 20348 up
//     to its own;
//   - containerd 2.1 and 2.2 (platforms v1.0.0-rc.2,
//     platform_windows_compat.go): LTSC builds [20348, 26100]; the floor is
//     the newest LTSC strictly older than the host (20348 for the host 20348
//     itself), so a host newer than 26100 runs 26100 on only;
//   - containerd 2.3 and 2.4 (platforms v1.0.0-rc.5): the floor is the LTSC
//     before the newest LTSC at or below the host (20348 for 20348 itself),
//     so every host from 26100 on runs 20348 on.
//
// Among the variants it can run, containerd 1.7 takes the first in the
// index's order (platforms.Default() is Only(DefaultSpec()): an ordered
// comparer, and images.Manifest sorts stably), containerd 2 the one of the
// greatest os.version, compared as strings (Default() is a
// windowsMatchComparer on Windows, whose Less is p1.OSVersion >
// p2.OSVersion; the CRI image service reads the image's config through it:
// internal/cri/server/images, imagestore.NewStore(..., platforms.Default())).

const (
	ltsc2022 = 20348
	ltsc2025 = 26100
)

// Compatible says whether containerd of version (MAJOR.MINOR.PATCH) runs a
// container of build ctr on a host of build host.
func Compatible(containerd string, host, ctr winrelease.Build) (bool, error) {
	major, minor, err := containerdLine(containerd)
	if err != nil {
		return false, err
	}
	if host.Major != ctr.Major || host.Minor != ctr.Minor {
		return false, nil
	}
	if host.Number < ltsc2022 {
		return host.Number == ctr.Number, nil
	}
	floor := ltsc2022
	switch {
	case major == 1:
		// [20348]: the host's LTSC is its floor.
	case major == 2 && minor <= 2:
		if host.Number > ltsc2025 {
			floor = ltsc2025
		}
	default:
		// The LTSC before the host's; 20348 for 20348 and 26100 alike.
	}
	return floor <= ctr.Number && ctr.Number <= host.Number, nil
}

// PulledVariant is the variant of an image, by its os.version
// (major.minor.build.UBR, in the index's order), that containerd of version
// runs on a host of build host; ok is false when it can run none.
func PulledVariant(containerd string, host winrelease.Build, variants []string) (v winrelease.Version, ok bool, err error) {
	major, _, err := containerdLine(containerd)
	if err != nil {
		return v, false, err
	}
	best := ""
	for _, s := range variants {
		cand, perr := winrelease.Parse(s)
		if perr != nil {
			continue
		}
		c, err := Compatible(containerd, host, cand.Build)
		if err != nil {
			return v, false, err
		}
		if !c {
			continue
		}
		if major == 1 {
			return cand, true, nil
		}
		if !ok || s > best {
			v, best, ok = cand, s, true
		}
	}
	return v, ok, nil
}
