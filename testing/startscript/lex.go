// Package startscript is the Go side's model of the HostProcess start
// scripts (infra/windows/manifests/*.ps1): a reader of the few PowerShell
// forms they use, which finds every place a script writes on the node
// (files, directories, what the programs it starts write) and reads, with
// paths resolved through the script's assignments, Join-Path and the
// container's environment; and the layouts in which containerd puts a
// HostProcess pod's volumes (layout.go), against which those paths are
// checked. PowerShell does not run here: the scripts' behaviour is tested by
// their Pester tests on the Windows runners; this model catches, on Linux,
// a script that writes where the node will not let it.
//
// The reader is conservative: a write whose path it cannot resolve, a
// command it knows to write in a form it does not read, and a program it
// does not know are errors, never silent passes.
package startscript

import (
	"fmt"
	"strings"
	"unicode"
)

type kind int

const (
	tWord     kind = iota // a bareword: a command, a parameter (-Path), an operator (-eq), a number, an unquoted path
	tString               // a string literal; expandable for "..." and @"..."@
	tVar                  // a variable: state, env:KUBE_NETWORK; splat is @name
	tType                 // a type literal: [IO.File], [int]
	tOp                   // ( ) { } , ; | = & . :: $( @( @{ and the rest
	tRedirect             // > >> 2> *>&1 ...
	tNewline
)

type token struct {
	kind       kind
	text       string // the word, the operator, the variable's name, the string's value (unescaped)
	expandable bool   // a "..." string, whose $ parts are expanded
	splat      bool   // @name
	space      bool   // whitespace before it
	line       int
}

// lex splits a script into tokens: enough of PowerShell's lexical rules for
// the start scripts, and an error for what it cannot read.
func lex(src string) ([]token, error) {
	var toks []token
	line := 1
	i := 0
	space := true
	emit := func(t token) {
		t.space = space
		t.line = line
		toks = append(toks, t)
		space = false
	}
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			emit(token{kind: tNewline, text: "\n"})
			line++
			i++
			space = true
		case c == ' ' || c == '\t' || c == '\r':
			i++
			space = true
		case c == '`' && i+1 < len(src) && (src[i+1] == '\n' || src[i+1] == '\r'):
			// A line continuation.
			i++
			if src[i] == '\r' {
				i++
			}
			if i < len(src) && src[i] == '\n' {
				i++
			}
			line++
			space = true
		case strings.HasPrefix(src[i:], "<#"):
			end := strings.Index(src[i:], "#>")
			if end < 0 {
				return nil, fmt.Errorf("line %d: a block comment without #>", line)
			}
			line += strings.Count(src[i:i+end], "\n")
			i += end + 2
			space = true
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			space = true
		case strings.HasPrefix(src[i:], "@'\n") || strings.HasPrefix(src[i:], "@'\r\n") || strings.HasPrefix(src[i:], "@\"\n") || strings.HasPrefix(src[i:], "@\"\r\n"):
			quote := src[i+1]
			start := strings.IndexByte(src[i:], '\n') + i + 1
			end := strings.Index(src[start:], "\n"+string(quote)+"@")
			if end < 0 {
				return nil, fmt.Errorf("line %d: a here-string without its end", line)
			}
			body := strings.TrimSuffix(src[start:start+end], "\r")
			if quote == '"' {
				if err := checkVariableColons(body); err != nil {
					return nil, fmt.Errorf("line %d: %w", line, err)
				}
			}
			emit(token{kind: tString, text: body, expandable: quote == '"'})
			line += strings.Count(src[i:start+end+3], "\n")
			i = start + end + 3
		case c == '\'':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(src) {
					return nil, fmt.Errorf("line %d: an unclosed string", line)
				}
				if src[j] == '\'' {
					if j+1 < len(src) && src[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(src[j])
				j++
			}
			emit(token{kind: tString, text: b.String()})
			line += strings.Count(src[i:j], "\n")
			i = j + 1
		case c == '"':
			j, err := endOfExpandable(src, i+1)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			if err := checkVariableColons(src[i+1 : j]); err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			emit(token{kind: tString, text: src[i+1 : j], expandable: true})
			line += strings.Count(src[i:j], "\n")
			i = j + 1
		case c == '$' && i+1 < len(src) && src[i+1] == '(':
			emit(token{kind: tOp, text: "$("})
			i += 2
		case c == '$' && i+1 < len(src) && src[i+1] == '{':
			end := strings.IndexByte(src[i:], '}')
			if end < 0 {
				return nil, fmt.Errorf("line %d: ${ without }", line)
			}
			emit(token{kind: tVar, text: strings.ToLower(src[i+2 : i+end])})
			i += end + 1
		case c == '$':
			j := i + 1
			for j < len(src) && isVarChar(src, j) {
				j++
			}
			if j == i+1 && j < len(src) && (src[j] == '_' || src[j] == '?' || src[j] == '$') {
				j++
			}
			emit(token{kind: tVar, text: strings.ToLower(src[i+1 : j])})
			i = j
		case c == '@' && i+1 < len(src) && (src[i+1] == '(' || src[i+1] == '{'):
			emit(token{kind: tOp, text: src[i : i+2]})
			i += 2
		case c == '@' && i+1 < len(src) && isWordStart(src[i+1]):
			j := i + 1
			for j < len(src) && isVarChar(src, j) {
				j++
			}
			emit(token{kind: tVar, text: strings.ToLower(src[i+1 : j]), splat: true})
			i = j
		case c == '[' && i+1 < len(src) && isWordStart(src[i+1]) && (len(toks) == 0 || space || !closesOperand(toks[len(toks)-1])):
			depth := 0
			j := i
			for ; j < len(src); j++ {
				if src[j] == '[' {
					depth++
				} else if src[j] == ']' {
					depth--
					if depth == 0 {
						break
					}
				} else if src[j] == '\n' {
					return nil, fmt.Errorf("line %d: an unclosed type literal", line)
				}
			}
			emit(token{kind: tType, text: src[i+1 : j]})
			i = j + 1
		case redirect(src[i:]) != "":
			r := redirect(src[i:])
			emit(token{kind: tRedirect, text: r})
			i += len(r)
		case strings.HasPrefix(src[i:], "::"):
			emit(token{kind: tOp, text: "::"})
			i += 2
		case c == '.' && !space && len(toks) > 0 && closesOperand(toks[len(toks)-1]):
			emit(token{kind: tOp, text: "."})
			i++
		case strings.ContainsRune("(){}[],;|&=!+*/%", rune(c)):
			if (c == '+' || c == '-' || c == '*' || c == '/') && i+1 < len(src) && src[i+1] == '=' {
				emit(token{kind: tOp, text: src[i : i+2]})
				i += 2
				continue
			}
			emit(token{kind: tOp, text: string(c)})
			i++
		default:
			j := i
			for j < len(src) && !isWordEnd(src[j]) {
				j++
			}
			if j == i {
				return nil, fmt.Errorf("line %d: cannot read %q", line, src[i:min(len(src), i+10)])
			}
			emit(token{kind: tWord, text: src[i:j]})
			i = j
		}
	}
	return toks, nil
}

// endOfExpandable finds the closing quote of a "..." string that opened
// before from, past `-escapes, "" and $( ... ) subexpressions.
func endOfExpandable(src string, from int) (int, error) {
	for j := from; j < len(src); j++ {
		switch src[j] {
		case '`':
			j++
		case '"':
			if j+1 < len(src) && src[j+1] == '"' {
				j++
				continue
			}
			return j, nil
		case '$':
			if j+1 < len(src) && src[j+1] == '(' {
				end, err := endOfSubexpression(src, j+2)
				if err != nil {
					return 0, err
				}
				j = end
			}
		}
	}
	return 0, fmt.Errorf("an unclosed string")
}

// endOfSubexpression finds the ) that closes a $( opened before from.
func endOfSubexpression(src string, from int) (int, error) {
	depth := 1
	for j := from; j < len(src); j++ {
		switch src[j] {
		case '\'':
			end := strings.IndexByte(src[j+1:], '\'')
			if end < 0 {
				return 0, fmt.Errorf("an unclosed string in $( )")
			}
			j += end + 1
		case '"':
			end, err := endOfExpandable(src, j+1)
			if err != nil {
				return 0, err
			}
			j = end
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return j, nil
			}
		}
	}
	return 0, fmt.Errorf("an unclosed $(")
}

func redirect(s string) string {
	n := 0
	if len(s) > 0 && (s[0] == '*' || (s[0] >= '1' && s[0] <= '6')) {
		n = 1
	}
	if n >= len(s) || s[n] != '>' {
		return ""
	}
	n++
	if n < len(s) && s[n] == '>' {
		n++
	}
	if n+1 < len(s) && s[n] == '&' && s[n+1] >= '1' && s[n+1] <= '6' {
		n += 2
	}
	return s[:n]
}

func isWordStart(c byte) bool { return c == '_' || unicode.IsLetter(rune(c)) }

func isVarChar(src string, j int) bool {
	c := src[j]
	if c == '_' || unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)) {
		return true
	}
	// A scope or drive (env:NAME, script:x), not the :: of a static member.
	return c == ':' && j+1 < len(src) && src[j+1] != ':' && isWordStart(src[j+1]) && j > 0 && src[j-1] != ':'
}

func isWordEnd(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || strings.IndexByte("(){}[],;|&=\"'$", c) >= 0
}

// closesOperand says whether a token ends an operand, so that a . or [
// right after it is member access or indexing.
func closesOperand(t token) bool {
	return t.kind == tVar || t.kind == tString || t.kind == tType || (t.kind == tOp && (t.text == ")" || t.text == "]" || t.text == "}")) ||
		(t.kind == tWord && !strings.HasPrefix(t.text, "-"))
}

// checkVariableColons refuses what PowerShell's parser refuses in an
// expandable string: "$name:" with no name after the colon ("Variable
// reference is not valid. ':' was not followed by a valid variable name
// character"), which ${name}: writes.
func checkVariableColons(s string) error {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '`':
			i++
		case s[i] == '$' && i+1 < len(s) && isWordStart(s[i+1]):
			j := i + 1
			for j < len(s) && (s[j] == '_' || unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j]))) {
				j++
			}
			if j < len(s) && s[j] == ':' && (j+1 >= len(s) || (s[j+1] != ':' && !isWordStart(s[j+1]) && s[j+1] != '{')) {
				return fmt.Errorf("%q in a string is not a variable PowerShell reads: write ${%s}:", s[i:j+1], s[i+1:j])
			}
			i = j - 1
		}
	}
	return nil
}
