package gate

import "github.com/winconform/winconform/framework/ledger"

func ledgerEntry(claim, verdict string) ledger.Entry {
	return ledger.Entry{Claim: claim, Verdict: ledger.Verdict(verdict), Observed: ledger.Works, Expected: ledger.Limited, Unexpected: verdict == string(ledger.Lifted)}
}
