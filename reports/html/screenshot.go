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

	"github.com/winconform/winconform/internal/atomicfile"

	"github.com/chromedp/chromedp"
)

// ScreenshotFile is the screenshot's name in the report directory.
const ScreenshotFile = "report.png"

// Browsers are the names Chromium goes by on PATH, in the order they are tried.
var Browsers = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// ErrNoBrowser is returned when no Chromium is on PATH.
var ErrNoBrowser = errors.New("no Chromium on PATH")

// ErrScreenshotRemoved is returned (wrapped) by WriteHTML when the page was
// written but its older screenshot could not be taken again and was
// removed: a warning, not a failure to write the page.
var ErrScreenshotRemoved = errors.New("report.png removed")

// ScreenshotWidth is the page's width in the screenshot, in CSS pixels.
const ScreenshotWidth = 1400

// refreshTimeout bounds the refresh of a screenshot that WriteHTML makes stale.
const refreshTimeout = 2 * time.Minute

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
// first found on PATH when empty) into dir/report.png: the whole page,
// ScreenshotWidth pixels wide and as tall as the page is (the claims, the
// matrix, the ledger and the failures, however long). Chromium is driven
// over the DevTools protocol (chromedp), with a fresh profile and
// networking features off, and is stopped after timeout. The PNG appears
// whole (written beside, then renamed).
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
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.UserDataDir(profile),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.Flag("disable-quic", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true), chromedp.WindowSize(ScreenshotWidth, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	err = chromedp.Do(bctx,
		chromedp.EmulateViewport(ScreenshotWidth, 1000),
		chromedp.Navigate("file://"+page),
		chromedp.WaitReady(chromedp.CSS("body")),
	)
	var png []byte
	if err == nil {
		// The whole page, beyond the viewport; quality 100 is PNG.
		png, err = chromedp.Run(bctx, chromedp.FullScreenshot(100))
	}
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%s took longer than %s to render %s", browser, timeout, page)
	case err != nil:
		return fmt.Errorf("%s could not render %s: %v", browser, page, err)
	case len(png) == 0:
		return fmt.Errorf("%s rendered no screenshot of %s", browser, page)
	}
	return atomicfile.Write(shot, png, 0o644)
}

// refresh keeps dir/report.png true to the report.html just written: a
// screenshot there is taken again, and removed when it cannot be (it would
// show an older page). No screenshot, none taken.
func refresh(dir string) error {
	shot := filepath.Join(dir, ScreenshotFile)
	if _, err := os.Stat(shot); err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	if err := Screenshot(ctx, dir, "", refreshTimeout); err != nil {
		os.Remove(shot)
		return fmt.Errorf("%w (%s showed the page before this change and could not be taken again: %v)", ErrScreenshotRemoved, shot, err)
	}
	return nil
}
