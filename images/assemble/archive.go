package assemble

import (
	"fmt"
	"io"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// WriteArchive writes images, keyed by their tag, as one docker-archive
// tarball (the `docker save` format, which `ctr images import` also reads).
func WriteArchive(w io.Writer, images map[string]v1.Image) error {
	refs := make(map[name.Reference]v1.Image, len(images))
	for ref, img := range images {
		tag, err := name.NewTag(ref)
		if err != nil {
			return fmt.Errorf("image name %q: %w", ref, err)
		}
		refs[tag] = img
	}
	return tarball.MultiRefWrite(refs, w)
}

// WriteArchiveFile is WriteArchive into a new file at path.
func WriteArchiveFile(path string, images map[string]v1.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteArchive(f, images); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
