package vsphere

import (
	"context"
	"reflect"
	"sync"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// relogin logs in again when the vCenter has ended the session (it
// restarted, an administrator ended it, the keepalive could not get
// through) and sends the request once more: a request refused as
// NotAuthenticated was not carried out, so sending it again is safe.
type relogin struct {
	rt    soap.RoundTripper
	login func(context.Context) error

	mu  sync.Mutex
	gen int // counts the logins
}

// RoundTrip implements soap.RoundTripper.
func (r *relogin) RoundTrip(ctx context.Context, req, res soap.HasFault) error {
	switch req.(type) {
	case *methods.LoginBody, *methods.LogoutBody:
		return r.rt.RoundTrip(ctx, req, res) // the login below comes through here
	}
	r.mu.Lock()
	gen := r.gen
	r.mu.Unlock()
	err := r.rt.RoundTrip(ctx, req, res)
	if err == nil || !fault.Is(err, &types.NotAuthenticated{}) {
		return err
	}
	r.mu.Lock()
	if r.gen == gen { // no other request logged in again meanwhile
		if lerr := r.login(ctx); lerr != nil {
			r.mu.Unlock()
			return err
		}
		r.gen++
	}
	r.mu.Unlock()
	// The response holds the first answer's fault: start it afresh.
	if v := reflect.ValueOf(res); v.Kind() == reflect.Pointer && !v.IsNil() {
		v.Elem().Set(reflect.Zero(v.Elem().Type()))
	}
	return r.rt.RoundTrip(ctx, req, res)
}
