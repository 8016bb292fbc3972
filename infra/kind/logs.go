package kind

import (
	"fmt"
	"os"

	"github.com/winconform/winconform/internal/text"
)

// ExportLogs puts kind's collection of the cluster's node logs (kubelet,
// containerd, pods, journal) into dir, as `kind export logs` does. kind
// reports an error when one of its many collectors fails; what it did
// collect is kept, and the error says what was missed.
func (c *Cluster) ExportLogs(dir string) error {
	err := c.provider.CollectLogs(c.cfg.Name, dir)
	if _, statErr := os.Stat(dir); statErr != nil {
		return fmt.Errorf("exporting the logs of cluster %q: %v", c.cfg.Name, err)
	}
	if err != nil {
		return fmt.Errorf("some node logs of cluster %q could not be collected: %s", c.cfg.Name, text.FirstLine(err.Error()))
	}
	return nil
}
