package remote

// SecretKeeper is an Exec (or transcript) that can be told of a secret to
// keep out of everything it records and reports from now on.
type SecretKeeper interface {
	AddSecret(secret string)
}
