package html

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ScreenshotFile is the screenshot's name in the report directory.
const ScreenshotFile = "report.png"

// Browsers are the names Chromium goes by on PATH, in the order they are tried.
var Browsers = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// ErrNoBrowser is returned when no Chromium is on PATH.
var ErrNoBrowser = errors.New("no Chromium on PATH")

// FindBrowser returns the first of Browsers on PATH.
func FindBrowser() (string, error) {
	for _, b := range Browsers {
		if p, err := exec.LookPath(b); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w (looked for %s): install it (Debian: apt-get install chromium)", ErrNoBrowser, strings.Join(Browsers, ", "))
}

// Screenshot renders dir/report.html in headless Chromium (browser, or the
// first found on PATH when empty) into dir/report.png, 1400 pixels wide.
// The browser runs with a fresh profile, with networking features off,
// and is stopped after timeout.
func Screenshot(ctx context.Context, dir, browser string, timeout time.Duration) error {
	if browser == "" {
		b, err := FindBrowser()
		if err != nil {
			return err
		}
		browser = b
	}
	page, err := filepath.Abs(filepath.Join(dir, File))
	if err != nil {
		return err
	}
	if _, err := os.Stat(page); err != nil {
		return fmt.Errorf("%s: %v: write it first (winconform report --report %s)", page, err, dir)
	}
	shot, err := filepath.Abs(filepath.Join(dir, ScreenshotFile))
	if err != nil {
		return err
	}
	profile, err := os.MkdirTemp("", "winconform-chromium-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	os.Remove(shot)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--hide-scrollbars", "--user-data-dir="+profile, "--screenshot="+shot, "--window-size=1400,2000", "file://"+page)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return fmt.Errorf("%s took longer than %s to render %s: %s", browser, timeout, page, tail(out))
	}
	if err != nil {
		return fmt.Errorf("%s could not render %s: %v: %s", browser, page, err, tail(out))
	}
	if st, err := os.Stat(shot); err != nil || st.Size() == 0 {
		return fmt.Errorf("%s wrote no screenshot of %s: %s", browser, page, tail(out))
	}
	return nil
}

// tail is the last lines of a browser's output, for errors.
func tail(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, " | ")
}
