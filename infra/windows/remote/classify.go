package remote

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
)

// classify turns an error of a request made under ctx into a *Error with a
// class and an explanation. Step and Op are left for the caller.
func (w *WinRM) classify(ctx context.Context, err error) *Error {
	addr := net.JoinHostPort(w.cfg.Address, strconv.Itoa(w.cfg.Port))
	// The URL adds nothing the error does not say; keep the cause.
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	var (
		fault      *FaultError
		herr       *httpError
		schemeErr  *schemeError
		sealErr    *sealError
		unknownCA  x509.UnknownAuthorityError
		hostErr    x509.HostnameError
		invalid    x509.CertificateInvalidError
		recordErr  tls.RecordHeaderError
		alertErr   tls.AlertError
		dnsErr     *net.DNSError
		opErr      *net.OpError
		netErr     net.Error
		isDialFail = errors.As(err, &opErr) && opErr.Op == "dial"
	)
	switch {
	case ctx.Err() != nil:
		cause := ctx.Err()
		if errors.Is(cause, context.DeadlineExceeded) {
			return w.errorf(ErrTimeout, cause, "the step's deadline passed (%v)", cause)
		}
		return w.errorf(nil, cause, "the step was cancelled (%v)", cause)

	case errors.As(err, &fault):
		kind := ErrRemote
		if fault.Subcode == "w:TimedOut" {
			kind = ErrTimeout
		}
		redacted := *fault
		redacted.Reason = w.redactor.String(fault.Reason)
		redacted.Message = w.redactor.String(fault.Message)
		return w.errorf(kind, &redacted, "the machine answered with a fault: %s", redacted.Error())

	case errors.As(err, &schemeErr):
		return w.errorf(ErrAuth, schemeErr, "machine %s does not offer NTLM (the Negotiate scheme) on %s: %s; Negotiate is on by default (winrm/config/service/auth Negotiate=true): turn it back on, or use auth basic over HTTPS if the listener offers Basic",
			w.cfg.Name, addr, schemeErr.Error())

	case errors.As(err, &sealErr):
		return w.errorf(ErrRemote, sealErr, "the message encryption with %s failed: %s", addr, sealErr.Error())

	case errors.As(err, &herr):
		if herr.status == http.StatusUnauthorized {
			if w.cfg.Auth == AuthBasic {
				return w.errorf(ErrAuth, herr, "authentication failed for user %q on machine %s (HTTP 401 Unauthorized, basic auth): check the user name and the password (a local account: Basic takes no domain), and that the listener accepts Basic, which a stock server does not (winrm set winrm/config/service/auth @{Basic=\"true\"}); or use auth ntlm",
					w.cfg.User, w.cfg.Name)
			}
			return w.errorf(ErrAuth, herr, "authentication failed for user %q on machine %s (HTTP 401 Unauthorized, ntlm auth): check the user name (DOMAIN\\user for a domain account) and the password, and that the account is an administrator there; a local administrator other than the built-in Administrator also needs LocalAccountTokenFilterPolicy=1 (infra/windows/setup/Prepare-WinRM.ps1 sets it)",
				w.cfg.User, w.cfg.Name)
		}
		if herr.status == http.StatusBadRequest && strings.Contains(herr.body, "HTTPS") {
			return w.errorf(ErrTLS, herr, "%s wants HTTPS: set HTTPS (WinRM listens for HTTP on 5985 and HTTPS on 5986)", addr)
		}
		return w.errorf(ErrRemote, herr, "unexpected answer from %s: %s", addr, herr.Error())

	case errors.As(err, &unknownCA):
		subject := "an unknown authority"
		if unknownCA.Cert != nil {
			subject = "\"" + unknownCA.Cert.Issuer.String() + "\", an unknown authority"
		}
		return w.errorf(ErrTLS, err, "the certificate of %s is not trusted: it is signed by %s; give the machine's CA bundle (CABundle) or, for a test machine, use the insecure switch", addr, subject)

	case errors.As(err, &hostErr):
		return w.errorf(ErrTLS, err, "the certificate of %s does not match the name %q (TLS name mismatch): it is for %s; set the TLS server name to a name the certificate has, or use the insecure switch",
			addr, hostErr.Host, certNames(hostErr.Certificate))

	case errors.As(err, &invalid):
		return w.errorf(ErrTLS, err, "the certificate of %s is not valid: %s", addr, strings.TrimPrefix(invalid.Error(), "x509: "))

	case errors.As(err, &recordErr), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return w.errorf(ErrTLS, err, "%s did not answer with TLS: is HTTPS right for port %d? (WinRM listens for HTTP on 5985 and HTTPS on 5986)", addr, w.cfg.Port)

	case errors.As(err, &alertErr):
		return w.errorf(ErrTLS, err, "%s refused the TLS handshake: %v", addr, alertErr)

	case errors.As(err, &dnsErr):
		return w.errorf(ErrUnreachable, err, "cannot resolve %q: %v", w.cfg.Address, dnsErr.Err)

	case errors.Is(err, syscall.ECONNREFUSED) && (w.cfg.HTTPS || w.cfg.Port == DefaultHTTPSPort):
		return w.errorf(ErrUnreachable, err, "connection to %s refused: nothing listens there; a stock Windows Server listens only for HTTP on 5985: run infra/windows/setup/Prepare-WinRM.ps1 on the machine (an HTTPS listener on %d with a certificate, and its firewall rule), or reach it over HTTP on 5985 with auth ntlm", addr, w.cfg.Port)

	case errors.Is(err, syscall.ECONNREFUSED):
		return w.errorf(ErrUnreachable, err, "connection to %s refused: nothing listens there; is WinRM enabled (winrm quickconfig) with a listener on port %d, and does the firewall let it through?", addr, w.cfg.Port)

	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return w.errorf(ErrUnreachable, err, "no route to %s", addr)

	case isDialFail && opErr.Timeout():
		hint := ""
		if !w.cfg.HTTPS {
			// Enable-PSRemoting's documentation: on server versions the
			// Public profile's rule admits only the local subnet.
			hint = "; over HTTP from another subnet, Windows Server's built-in WinRM rule for the Public network profile (WINRM-HTTP-In-TCP-PUBLIC) admits only the machine's own subnet: open the port to the harness's range (infra/windows/setup/Prepare-WinRM.ps1 -HttpFrom <range>), or use HTTPS"
		}
		e := w.errorf(ErrTimeout, err, "could not connect to %s within %v: the address does not answer (wrong address, machine off, or a firewall dropping packets)%s", addr, w.cfg.ConnectTimeout, hint)
		e.also = ErrUnreachable
		return e

	case errors.As(err, &netErr) && netErr.Timeout() && strings.Contains(err.Error(), "TLS handshake"):
		return w.errorf(ErrTimeout, err, "the TLS handshake with %s did not finish within %v: is HTTPS right for that port?", addr, w.cfg.ConnectTimeout)

	case errors.As(err, &netErr) && netErr.Timeout():
		return w.errorf(ErrTimeout, err, "%s did not answer within %v", addr, w.cfg.OperationTimeout+responseGrace)

	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return w.errorf(ErrConnLost, err, "the connection to %s broke before it answered", addr)

	case isDialFail:
		return w.errorf(ErrUnreachable, err, "cannot connect to %s", addr)
	}
	return w.errorf(ErrConnLost, err, "request to %s failed", addr)
}

// certNames lists the names a certificate is valid for.
func certNames(cert *x509.Certificate) string {
	if cert == nil {
		return "other names"
	}
	var names []string
	names = append(names, cert.DNSNames...)
	for _, ip := range cert.IPAddresses {
		names = append(names, ip.String())
	}
	if len(names) == 0 {
		if cert.Subject.CommonName == "" {
			return "no name"
		}
		return cert.Subject.CommonName + " (common name only, which Go does not check)"
	}
	return strings.Join(names, ", ")
}
