package azure

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/config"
)

// image is the VM file's image, as Azure takes it.
type image struct {
	// kind is "gallery" (an Azure Compute Gallery image, its latest
	// version, or one version: what image-builder's Azure builds publish),
	// "managed" (a managed image) or "marketplace" (publisher:offer:sku:version).
	kind string
	// id is the gallery image's, its version's or the managed image's
	// resource ID.
	id *arm.ResourceID
	// The marketplace image's URN parts.
	publisher, offer, sku, version string
}

const fixImage = "write an Azure Compute Gallery image's or version's resource ID (/subscriptions/<ID>/resourceGroups/<group>/providers/Microsoft.Compute/galleries/<gallery>/images/<image>[/versions/<version>], what image-builder publishes), a managed image's resource ID, or a marketplace image as publisher:offer:sku:version (MicrosoftWindowsServer:WindowsServer:2022-datacenter-core-g2:latest)"

// parseImage reads the VM file's image.
func parseImage(v string) (image, error) {
	if parts := strings.Split(v, ":"); len(parts) == 4 && !strings.HasPrefix(v, "/") {
		for _, p := range parts {
			if p == "" || strings.ContainsAny(p, "/ ") {
				return image{}, fmt.Errorf("%q is not a marketplace image's publisher:offer:sku:version", v)
			}
		}
		return image{kind: "marketplace", publisher: parts[0], offer: parts[1], sku: parts[2], version: parts[3]}, nil
	}
	id, err := arm.ParseResourceID(v)
	if err != nil {
		return image{}, fmt.Errorf("%q is neither a resource ID nor publisher:offer:sku:version", v)
	}
	switch t := strings.ToLower(id.ResourceType.String()); t {
	case "microsoft.compute/galleries/images", "microsoft.compute/galleries/images/versions":
		return image{kind: "gallery", id: id}, nil
	case "microsoft.compute/images":
		return image{kind: "managed", id: id}, nil
	default:
		return image{}, fmt.Errorf("%q is a %s, not an image", v, id.ResourceType.String())
	}
}

// reference is the image as a VM's storage profile names it.
func (im image) reference() *armcompute.ImageReference {
	if im.kind == "marketplace" {
		return &armcompute.ImageReference{Publisher: to.Ptr(im.publisher), Offer: to.Ptr(im.offer), SKU: to.Ptr(im.sku), Version: to.Ptr(im.version)}
	}
	return &armcompute.ImageReference{ID: to.Ptr(im.id.String())}
}

func (im image) String() string {
	if im.kind == "marketplace" {
		return strings.Join([]string{im.publisher, im.offer, im.sku, im.version}, ":")
	}
	return im.id.String()
}

// check asks Azure whether the image exists (and, for a marketplace
// image, is offered in location): a missing image is an error naming the
// image field, before any machine is made.
func (p *provider) checkImage(ctx context.Context, im image) error {
	var err error
	switch im.kind {
	case "marketplace":
		if im.version == "latest" {
			var res armcompute.VirtualMachineImagesClientListResponse
			res, err = p.images.List(ctx, p.s.Location, im.publisher, im.offer, im.sku, &armcompute.VirtualMachineImagesClientListOptions{Top: to.Ptr[int32](1)})
			if err == nil && len(res.VirtualMachineImageResourceArray) == 0 {
				return config.Problem(field.NewPath("image"), fmt.Sprintf("the marketplace has no version of %s in %s", im, p.s.Location),
					"check the publisher, offer and SKU (az vm image list --all --publisher P --offer O --sku S --location L)", nil)
			}
		} else {
			_, err = p.images.Get(ctx, p.s.Location, im.publisher, im.offer, im.sku, im.version, nil)
		}
	case "managed":
		c, cerr := armcompute.NewImagesClient(im.id.SubscriptionID, p.cred, p.opts)
		if cerr != nil {
			return cerr
		}
		_, err = c.Get(ctx, im.id.ResourceGroupName, im.id.Name, nil)
	case "gallery":
		if strings.EqualFold(im.id.ResourceType.Type, "galleries/images/versions") {
			c, cerr := armcompute.NewGalleryImageVersionsClient(im.id.SubscriptionID, p.cred, p.opts)
			if cerr != nil {
				return cerr
			}
			_, err = c.Get(ctx, im.id.ResourceGroupName, im.id.Parent.Parent.Name, im.id.Parent.Name, im.id.Name, nil)
		} else {
			c, cerr := armcompute.NewGalleryImagesClient(im.id.SubscriptionID, p.cred, p.opts)
			if cerr != nil {
				return cerr
			}
			_, err = c.Get(ctx, im.id.ResourceGroupName, im.id.Parent.Name, im.id.Name, nil)
		}
	}
	var re *azcore.ResponseError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &re) && re.StatusCode == 404:
		return config.Problem(field.NewPath("image"), fmt.Sprintf("%s does not exist (Azure: %s)", im, re.ErrorCode), fixImage, err)
	case errors.As(err, &re) && re.StatusCode == 403:
		return config.Problem(field.NewPath("image"), fmt.Sprintf("the identity may not read %s (Azure: %s)", im, re.ErrorCode),
			"give the identity Reader on the gallery or image (or use an image in a subscription it can read)", err)
	}
	return p.explain(err, "check image "+im.String())
}
