// Package docs_test holds README.md and docs/*.md to the tree they
// describe, so that what goes stale fails `make test` instead of misleading
// a reader:
//
//   - every relative link points to a file or directory that exists, and
//     every #anchor into a Markdown file to one of its headings (GitHub's
//     slugs);
//   - every backticked path into the tree exists, and every `make TARGET`
//     is a target of the Makefile;
//   - every "N claims" and "Shown: X of N" figure is the number of claims in
//     the catalogue (framework/claims);
//   - docs/suites.md's claims column names every claim of the catalogue
//     once, in the suite whose code names it;
//   - the Kubernetes lines table (docs/cluster.md) and the kubelet and
//     containerd table (docs/windows-machines.md) are internal/kubelines';
//   - README.md has at most 250 lines and names `make e2e` and `make test`;
//   - docs/development.md lists every place a run begins (runid.Begin).
package docs_test

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/internal/kubelines"
)

// maxReadmeLines is how long the front door may be.
const maxReadmeLines = 250

// pending are documents other branches are writing: a link to one may
// point nowhere until it is merged; once it exists it is checked as any
// other (and the entry can go).
var pending = map[string]string{}

// foreignMake are make targets the docs name in other projects' Makefiles.
var foreignMake = map[string]string{
	"build-node-ova-vsphere-windows-2022":     "kubernetes-sigs/image-builder",
	"build-azure-vhd-windows-2022-containerd": "kubernetes-sigs/image-builder",
}

// topDirs are the tree's top-level directories: a backticked token that
// starts with one of them is taken as a path into the tree.
var topDirs = []string{"cmd", "suites", "framework", "infra", "images", "reports", "internal",
	"tools", "testing", "fixtures", "policies", "docs", ".ci", ".github"}

// root is the module's directory: two up from this package's.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("the module's root is not %s: %v", dir, err)
	}
	return dir
}

// doc is one Markdown file, split into what the checks read.
type doc struct {
	rel   string   // its path from the root, slash-separated
	lines []string // every line
	// prose[i] is lines[i] outside fenced code blocks (code spans kept),
	// "" inside them.
	prose []string
	// fenced[i] says whether lines[i] is inside a fenced code block (its
	// fences included).
	fenced []bool
	// headings are the ATX headings outside fenced code, as written.
	headings []string
}

var headingRE = regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)

func parseDoc(rel, text string) doc {
	d := doc{rel: rel}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	fence := ""
	for sc.Scan() {
		line := sc.Text()
		d.lines = append(d.lines, line)
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case fence != "":
			d.prose = append(d.prose, "")
			d.fenced = append(d.fenced, true)
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence = ""
			}
			continue
		case strings.HasPrefix(trimmed, "```"), strings.HasPrefix(trimmed, "~~~"):
			n := len(trimmed) - len(strings.TrimLeft(trimmed, trimmed[:1]))
			fence = strings.Repeat(trimmed[:1], n)
			d.prose = append(d.prose, "")
			d.fenced = append(d.fenced, true)
			continue
		}
		d.prose = append(d.prose, line)
		d.fenced = append(d.fenced, false)
		if m := headingRE.FindStringSubmatch(line); m != nil {
			d.headings = append(d.headings, m[2])
		}
	}
	return d
}

// docs reads README.md and docs/*.md.
func docs(t *testing.T, dir string) []doc {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(dir, "README.md")}, files...)
	var out []doc
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, f)
		out = append(out, parseDoc(filepath.ToSlash(rel), string(data)))
	}
	if len(out) < 10 {
		t.Fatalf("found %d documents (README.md and docs/*.md)", len(out))
	}
	return out
}

// codeSpans splits a line into its prose, with inline code spans blanked
// out, and the spans' contents.
func codeSpans(line string) (prose string, spans []string) {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			b.WriteByte(line[i])
			i++
			continue
		}
		n := 0
		for i+n < len(line) && line[i+n] == '`' {
			n++
		}
		open := line[i : i+n]
		end := -1
		for j := i + n; j < len(line); {
			k := strings.Index(line[j:], open)
			if k < 0 {
				break
			}
			k += j
			m := 0
			for k+m < len(line) && line[k+m] == '`' {
				m++
			}
			if m == n {
				end = k
				break
			}
			j = k + m
		}
		if end < 0 { // no closing run: the backticks are literal
			b.WriteString(open)
			i += n
			continue
		}
		spans = append(spans, strings.TrimSpace(line[i+n:end]))
		b.WriteString(strings.Repeat(" ", end+n-i))
		i = end + n
	}
	return b.String(), spans
}

// slug is GitHub's anchor for a heading: its text as rendered (links to
// their text, code spans to their content, emphasis markers and HTML tags
// gone), lower-cased, with every character but letters, marks, digits,
// connector punctuation, spaces and hyphens removed, and spaces made
// hyphens.
func slug(heading string) string {
	text := linkRE.ReplaceAllString(heading, "$1")
	text = htmlTagRE.ReplaceAllString(text, "")
	text = strings.NewReplacer("`", "", "*", "").Replace(text)
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-', unicode.IsLetter(r), unicode.IsDigit(r), unicode.IsNumber(r), unicode.IsMark(r), unicode.Is(unicode.Pc, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var (
	linkRE    = regexp.MustCompile(`!?\[([^\]]*)\]\(([^()\s]*)(?:\s+"[^"]*")?\)`)
	refDefRE  = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(\S+)`)
	htmlTagRE = regexp.MustCompile(`<[^>]+>`)
	schemeRE  = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	lineRefRE = regexp.MustCompile(`^L\d+(-L\d+)?$`)
)

// anchors are a document's heading slugs, with GitHub's -1, -2, ... for
// repeated ones.
func anchors(d doc) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, h := range d.headings {
		s := slug(h)
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// linkProblems checks every relative link of the documents. read returns
// a Markdown file's document (ok false when there is none); exists says
// whether a path, relative to the root, is there.
func linkProblems(all []doc, read func(rel string) (doc, bool), exists func(rel string) bool) []string {
	var out []string
	for _, d := range all {
		for i, line := range d.prose {
			if line == "" {
				continue
			}
			prose, _ := codeSpans(line)
			var dests []string
			for _, m := range linkRE.FindAllStringSubmatch(prose, -1) {
				dests = append(dests, m[2])
			}
			if m := refDefRE.FindStringSubmatch(prose); m != nil {
				dests = append(dests, m[1])
			}
			for _, dest := range dests {
				if p := checkLink(d, dest, read, exists); p != "" {
					out = append(out, fmt.Sprintf("%s:%d: link %q: %s", d.rel, i+1, dest, p))
				}
			}
		}
	}
	return out
}

func checkLink(d doc, dest string, read func(string) (doc, bool), exists func(string) bool) string {
	dest = strings.Trim(dest, "<>")
	if dest == "" {
		return "empty"
	}
	if schemeRE.MatchString(dest) || strings.HasPrefix(dest, "//") {
		return "" // another site's
	}
	file, frag, _ := strings.Cut(dest, "#")
	if file == "" {
		if frag != "" && !anchors(d)[frag] {
			return fmt.Sprintf("%s has no heading whose anchor is #%s", d.rel, frag)
		}
		return ""
	}
	target := d.rel
	{
		if strings.HasPrefix(file, "/") {
			return "an absolute path: write it relative to " + d.rel
		}
		target = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(d.rel), file)))
		if strings.HasPrefix(target, "../") {
			return "points outside the repository"
		}
		if !exists(target) {
			if _, ok := pending[target]; ok {
				return ""
			}
			return target + " does not exist"
		}
	}
	if frag == "" {
		return ""
	}
	if !strings.HasSuffix(target, ".md") {
		if lineRefRE.MatchString(frag) {
			return ""
		}
		return "an anchor into " + target + ", which is not Markdown"
	}
	td, ok := read(target)
	if !ok {
		return target + " cannot be read"
	}
	if !anchors(td)[frag] {
		return fmt.Sprintf("%s has no heading whose anchor is #%s", target, frag)
	}
	return ""
}

// treePaths are the backticked tokens that name a path into the tree.
func treePaths(d doc) map[int][]string {
	out := map[int][]string{}
	for i, line := range d.prose {
		_, spans := codeSpans(line)
		for _, s := range spans {
			for _, tok := range strings.Fields(s) {
				tok = strings.TrimLeft(strings.TrimRight(tok, ",.;:)'\""), "('\"")
				tok = strings.TrimPrefix(tok, "./")
				tok, _, _ = strings.Cut(tok, ":") // a reference's tag, a file's line
				if tok == "" || strings.ContainsAny(tok, "<>*$%{}[]=") || strings.Contains(tok, "...") {
					continue
				}
				if first, _, ok := strings.Cut(tok, "/"); ok && slices.Contains(topDirs, first) {
					out[i+1] = append(out[i+1], strings.TrimSuffix(tok, "/"))
				}
			}
		}
	}
	return out
}

var (
	makeInSpanRE = regexp.MustCompile(`^make ([a-z][a-z0-9-]*)\b`)
	makeInCodeRE = regexp.MustCompile(`^\s*(?:\$\s+|sudo\s+)?make ([a-z][a-z0-9-]*)\b`)
	targetRE     = regexp.MustCompile(`^([a-z][a-z0-9-]*):([^=]|$)`)
)

// makeTargets are the `make TARGET`s a document names: in code spans and
// at the start of a command in fenced code.
func makeTargets(d doc) map[int][]string {
	out := map[int][]string{}
	for i, line := range d.lines {
		if d.fenced[i] {
			if m := makeInCodeRE.FindStringSubmatch(line); m != nil {
				out[i+1] = append(out[i+1], m[1])
			}
			continue
		}
		_, spans := codeSpans(line)
		for _, s := range spans {
			if m := makeInSpanRE.FindStringSubmatch(s); m != nil {
				out[i+1] = append(out[i+1], m[1])
			}
		}
	}
	return out
}

func exists(dir, rel string) bool {
	_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
	return err == nil
}

// rowBase is the path a table row is about, the code span of its first
// cell: a path in the row's other cells may be relative to it
// (`tools` | ... `bench`).
func rowBase(cells []string) string {
	if len(cells) == 0 {
		return "-"
	}
	if _, spans := codeSpans(cells[0]); len(spans) > 0 && !strings.ContainsAny(spans[0], " \t") {
		return strings.TrimSuffix(spans[0], "/")
	}
	return "-"
}

func makefileTargets(t *testing.T, dir string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if m := targetRE.FindStringSubmatch(line); m != nil {
			out[m[1]] = true
		}
	}
	if !out["test"] || !out["e2e"] {
		t.Fatalf("the Makefile's targets, as read here, lack test or e2e: %v", out)
	}
	return out
}

// catalogueIDs are the claim IDs of the catalogue (framework/claims).
func catalogueIDs() []string {
	var ids []string
	for _, c := range claims.All() {
		ids = append(ids, c.ID)
	}
	return ids
}

var (
	claimsFigureRE = regexp.MustCompile(`\b(\d+)\s+claims\b`)
	shownFigureRE  = regexp.MustCompile(`Shown: \S+ of (\d+)\b`)
)

// figureProblems checks every "N claims" and "Shown: X of N" figure
// against the catalogue's size.
func figureProblems(all []doc, total int) []string {
	var out []string
	for _, d := range all {
		for i, line := range d.lines {
			for _, re := range []*regexp.Regexp{claimsFigureRE, shownFigureRE} {
				for _, m := range re.FindAllStringSubmatch(line, -1) {
					if n, _ := strconv.Atoi(m[1]); n != total {
						out = append(out, fmt.Sprintf("%s:%d: %q: the catalogue holds %d claims (framework/claims); write its number or none", d.rel, i+1, m[0], total))
					}
				}
			}
		}
	}
	return out
}

// tableRows are the cells of a document's table rows (header and
// delimiter rows included), by line number.
func tableRows(d doc) map[int][]string {
	out := map[int][]string{}
	for i, line := range d.prose {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "|") || !strings.HasSuffix(t, "|") {
			continue
		}
		var cells []string
		for _, c := range strings.Split(t[1:len(t)-1], "|") {
			cells = append(cells, strings.TrimSpace(c))
		}
		out[i+1] = cells
	}
	return out
}

var (
	suiteCellRE = regexp.MustCompile("^`([a-z]+)`$")
	claimItemRE = regexp.MustCompile(`^([A-Z]+)-(\d+)(?:\.\.(\d+))?$`)
	idLiteralRE = regexp.MustCompile(`"([A-Z]+-\d+)"`)
)

// suiteProblems checks docs/suites.md's table of areas and claims against
// the catalogue and the suites' code.
func suiteProblems(d doc, ids []string, suiteIDs map[string][]string) []string {
	var out []string
	inCatalogue := map[string]bool{}
	for _, id := range ids {
		inCatalogue[id] = true
	}
	row := map[string]string{} // claim ID: its suite
	suites := 0
	rows := tableRows(d)
	for _, n := range slices.Sorted(maps.Keys(rows)) {
		cells := rows[n]
		m := suiteCellRE.FindStringSubmatch(cells[0])
		if m == nil || len(cells) < 2 {
			continue
		}
		suite := m[1]
		if _, ok := suiteIDs[suite]; !ok {
			out = append(out, fmt.Sprintf("%s:%d: suite %q: there is no suites/%s", d.rel, n, suite, suite))
			continue
		}
		suites++
		for _, item := range strings.Split(cells[1], ",") {
			item = strings.TrimSpace(item)
			im := claimItemRE.FindStringSubmatch(item)
			if im == nil {
				out = append(out, fmt.Sprintf("%s:%d: %q is neither a claim ID nor a range AREA-NN..MM", d.rel, n, item))
				continue
			}
			from, _ := strconv.Atoi(im[2])
			to := from
			if im[3] != "" {
				to, _ = strconv.Atoi(im[3])
			}
			width := len(im[2])
			for k := from; k <= to; k++ {
				id := fmt.Sprintf("%s-%0*d", im[1], width, k)
				switch {
				case !inCatalogue[id]:
					out = append(out, fmt.Sprintf("%s:%d: %s (of %s) is not in the catalogue", d.rel, n, id, item))
				case row[id] != "":
					out = append(out, fmt.Sprintf("%s:%d: %s is in the rows of both %s and %s", d.rel, n, id, row[id], suite))
				default:
					row[id] = suite
				}
			}
		}
	}
	if suites < len(suiteIDs)/2 {
		return append(out, fmt.Sprintf("%s: found a table of %d suites", d.rel, suites))
	}
	for _, id := range ids {
		if row[id] == "" {
			out = append(out, fmt.Sprintf("%s: claim %s is in no suite's row", d.rel, id))
		}
	}
	for _, suite := range slices.Sorted(maps.Keys(suiteIDs)) {
		for _, id := range suiteIDs[suite] {
			if inCatalogue[id] && row[id] != "" && row[id] != suite {
				out = append(out, fmt.Sprintf("%s: claim %s is in %s's row, but suites/%s names it", d.rel, id, row[id], suite))
			}
		}
	}
	return out
}

// suiteClaimIDs lists, per area under suites/ (a directory of Go files),
// the claim IDs its code names as string literals.
func suiteClaimIDs(t *testing.T, dir string) map[string][]string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "suites"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, "suites", e.Name(), "*.go"))
		ids := []string{}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range idLiteralRE.FindAllStringSubmatch(string(data), -1) {
				if !slices.Contains(ids, m[1]) {
					ids = append(ids, m[1])
				}
			}
		}
		out[e.Name()] = ids
	}
	return out
}

var lineCellRE = regexp.MustCompile(`^\**1\.(\d+)\**(?: \((default|oldest|pre-release)\))?$`)

// linesProblems checks docs/cluster.md's table of Kubernetes lines (line,
// release, end of life, containerd) against internal/kubelines.
func linesProblems(d doc, lines []kubelines.Line, def, oldest kubelines.Line) []string {
	var out []string
	found := map[int]bool{}
	rows := tableRows(d)
	for _, n := range slices.Sorted(maps.Keys(rows)) {
		cells := rows[n]
		m := lineCellRE.FindStringSubmatch(cells[0])
		if m == nil || len(cells) < 4 {
			continue
		}
		minor, _ := strconv.Atoi(m[1])
		i := slices.IndexFunc(lines, func(l kubelines.Line) bool { return l.Minor == minor })
		if i < 0 {
			out = append(out, fmt.Sprintf("%s:%d: 1.%d is no line internal/kubelines supports", d.rel, n, minor))
			continue
		}
		l := lines[i]
		found[minor] = true
		wantMark := ""
		switch {
		case l.PreRelease():
			wantMark = "pre-release"
		case l.Minor == def.Minor:
			wantMark = "default"
		case l.Minor == oldest.Minor:
			wantMark = "oldest"
		}
		for _, c := range []struct{ what, got, want string }{
			{"mark", m[2], wantMark},
			{"release", cells[1], l.Version},
			{"end of life", cells[2], l.EndOfLife},
			{"containerd", cells[3], l.ContainerdSupport()},
		} {
			if c.got != c.want {
				out = append(out, fmt.Sprintf("%s:%d: line %s: %s %q, internal/kubelines says %q", d.rel, n, l.Name(), c.what, c.got, c.want))
			}
		}
	}
	for _, l := range lines {
		if !found[l.Minor] {
			out = append(out, fmt.Sprintf("%s: the Kubernetes lines table has no row for %s", d.rel, l))
		}
	}
	return out
}

// containerdProblems checks docs/windows-machines.md's table of kubelet
// lines and the containerd releases they support against
// internal/kubelines.
func containerdProblems(d doc, lines []kubelines.Line) []string {
	var out []string
	found := map[int]bool{}
	for n, cells := range tableRows(d) {
		m := lineCellRE.FindStringSubmatch(cells[0])
		if m == nil || len(cells) != 2 {
			continue
		}
		minor, _ := strconv.Atoi(m[1])
		i := slices.IndexFunc(lines, func(l kubelines.Line) bool { return l.Minor == minor })
		if i < 0 {
			out = append(out, fmt.Sprintf("%s:%d: 1.%d is no line internal/kubelines supports", d.rel, n, minor))
			continue
		}
		found[minor] = true
		got, _, _ := strings.Cut(cells[1], " (")
		if want := lines[i].ContainerdSupport(); got != want {
			out = append(out, fmt.Sprintf("%s:%d: kubelet %s: containerd %q, internal/kubelines says %q", d.rel, n, lines[i].Name(), got, want))
		}
	}
	for _, l := range lines {
		if !found[l.Minor] {
			out = append(out, fmt.Sprintf("%s: the kubelet and containerd table has no row for %s", d.rel, l.Name()))
		}
	}
	return out
}

func find(t *testing.T, all []doc, rel string) doc {
	t.Helper()
	for _, d := range all {
		if d.rel == rel {
			return d
		}
	}
	t.Fatalf("%s is missing", rel)
	return doc{}
}

func report(t *testing.T, problems []string) {
	t.Helper()
	for _, p := range problems {
		t.Error(p)
	}
}

// readmeSectionRE finds a section named in prose, as the docs name one:
// an italic phrase (*Quick start*, _The files_).
var readmeSectionRE = regexp.MustCompile(`(?:^|[\s(])(?:\*([^*\s][^*]*?)\*|_([^_\s][^_]*?)_)`)

// readmeSectionProblems finds README sections named in the prose of
// docs/*.md (a paragraph that mentions the README and names a section in
// italics) that README.md has no heading for: a reader sent to a
// section that went away. A link (README.md#anchor) is checked by
// linkProblems.
func readmeSectionProblems(all []doc, readme doc) []string {
	headings := map[string]bool{}
	for _, h := range readme.headings {
		headings[strings.ToLower(h)] = true
	}
	var out []string
	for _, d := range all {
		if d.rel == "README.md" {
			continue
		}
		start := 0
		for i := 0; i <= len(d.prose); i++ {
			if i < len(d.prose) && strings.TrimSpace(d.prose[i]) != "" {
				continue
			}
			para := strings.Join(d.prose[start:i], " ")
			first := start + 1
			start = i + 1
			if !strings.Contains(para, "README") {
				continue
			}
			prose, _ := codeSpans(para)
			for _, m := range readmeSectionRE.FindAllStringSubmatch(prose, -1) {
				name := m[1] + m[2]
				if !headings[strings.ToLower(name)] {
					out = append(out, fmt.Sprintf("%s:%d: names the README section %q, which README.md has no heading for: link the section that says it now", d.rel, first, name))
				}
			}
		}
	}
	return out
}

// The documents against the tree.

func TestLinks(t *testing.T) {
	dir := root(t)
	all := docs(t, dir)
	read := func(rel string) (doc, bool) {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return doc{}, false
		}
		return parseDoc(rel, string(data)), true
	}
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
		return err == nil
	}
	report(t, linkProblems(all, read, exists))
	report(t, readmeSectionProblems(all, find(t, all, "README.md")))
	for rel, what := range pending {
		if exists(rel) {
			t.Logf("%s (%s) exists now: its links are checked, and its entry in pending can go", rel, what)
		}
	}
}

func TestPathsAndMakeTargets(t *testing.T) {
	dir := root(t)
	targets := makefileTargets(t, dir)
	for _, d := range docs(t, dir) {
		rows := tableRows(d)
		for n, paths := range treePaths(d) {
			for _, p := range paths {
				if _, ok := pending[p]; ok {
					continue
				}
				if !exists(dir, p) && !exists(dir, rowBase(rows[n])+"/"+p) {
					t.Errorf("%s:%d: `%s` is no path in the tree", d.rel, n, p)
				}
			}
		}
		for n, names := range makeTargets(d) {
			for _, name := range names {
				if !targets[name] && foreignMake[name] == "" {
					t.Errorf("%s:%d: `make %s`: the Makefile has no target %s", d.rel, n, name, name)
				}
			}
		}
	}
}

func TestClaimFigures(t *testing.T) {
	dir := root(t)
	ids := catalogueIDs()
	all := docs(t, dir)
	report(t, figureProblems(all, len(ids)))
	report(t, suiteProblems(find(t, all, "docs/suites.md"), ids, suiteClaimIDs(t, dir)))
}

func TestKubernetesLines(t *testing.T) {
	dir := root(t)
	all := docs(t, dir)
	lines := kubelines.Lines()
	report(t, linesProblems(find(t, all, "docs/cluster.md"), lines, kubelines.Default(), kubelines.Oldest()))
	report(t, containerdProblems(find(t, all, "docs/windows-machines.md"), lines))
}

// TestRunBeginnings holds docs/development.md's list of the places a run
// begins to the code: the non-test Go files that call runid.Begin.
func TestRunBeginnings(t *testing.T) {
	dir := root(t)
	listed := runBeginnings(find(t, docs(t, dir), "docs/development.md"))
	var calling []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "_output" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(data), "runid.Begin(") {
			rel, _ := filepath.Rel(dir, path)
			calling = append(calling, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	report(t, beginningProblems(listed, calling))
}

// runBeginnings are the files of the table under "Where a run begins".
func runBeginnings(d doc) []string {
	var out []string
	in := false
	for _, line := range d.prose {
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## Where a run begins"
		case in && strings.HasPrefix(line, "| `"):
			file, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
			out = append(out, file)
		}
	}
	return out
}

// beginningProblems compares the listed beginnings with the callers.
func beginningProblems(listed, calling []string) []string {
	var out []string
	for _, f := range calling {
		if !slices.Contains(listed, f) {
			out = append(out, fmt.Sprintf("%s makes a run ID (runid.Begin) but docs/development.md does not list it under \"Where a run begins\": a part of a run takes its run's ID; list it only if a run begins there", f))
		}
	}
	for _, f := range listed {
		if !slices.Contains(calling, f) {
			out = append(out, fmt.Sprintf("docs/development.md lists %s under \"Where a run begins\", but it does not call runid.Begin", f))
		}
	}
	return out
}

func TestReadme(t *testing.T) {
	dir := root(t)
	d := find(t, docs(t, dir), "README.md")
	if n := len(d.lines); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail into docs/", n, maxReadmeLines)
	}
	text := strings.Join(d.lines, "\n")
	for _, cmd := range []string{"make e2e", "make test"} {
		if !strings.Contains(text, cmd) {
			t.Errorf("README.md does not name %q, one of the two commands", cmd)
		}
	}
}

// The checks themselves: each finds what it is there to find (none of them
// can pass whatever the documents say).

func TestChecksCatchWhatTheyCheck(t *testing.T) {
	target := parseDoc("docs/b.md", "# B\n\n## What runs where\n\n## `make test`, again\n\n## Twice\n\n## Twice\n\n```\n# not a heading\n```\n")
	files := map[string]doc{"docs/b.md": target}
	read := func(rel string) (doc, bool) { d, ok := files[rel]; return d, ok }
	exists := func(rel string) bool { _, ok := files[rel]; return ok || rel == "docs" || rel == "go.mod" }
	for _, c := range []struct {
		line string
		bad  bool
	}{
		{"[b](b.md)", false},
		{"[b](b.md#what-runs-where)", false},
		{"[b](b.md#make-test-again)", false},
		{"[b](b.md#twice-1)", false},
		{"[b](b.md#twice-2)", true},
		{"[b](b.md#not-a-heading)", true},
		{"[b](b.md#what-runs-there)", true},
		{"[c](c.md)", true},
		{"[root](../go.mod)", false},
		{"[up](../../x.md)", true},
		{"[site](https://example.com/x.md#y)", false},
		{"`[not a link](c.md)`", false},
		{"[self](#b)", true}, // docs/a.md has no heading
	} {
		got := linkProblems([]doc{parseDoc("docs/a.md", c.line)}, read, exists)
		if (len(got) > 0) != c.bad {
			t.Errorf("%s: problems %q, want a problem: %v", c.line, got, c.bad)
		}
	}

	if got := beginningProblems([]string{"a.go", "b.go"}, []string{"a.go", "c.go"}); len(got) != 2 || !strings.Contains(got[0], "c.go") || !strings.Contains(got[1], "b.go") {
		t.Errorf("beginningProblems = %q, want c.go unlisted and b.go listed without a call", got)
	}
	dev := parseDoc("docs/development.md", "## Where a run begins\n\n| file | run |\n|---|---|\n| `x/a.go` | a |\n\n## Next\n\n| `x/b.go` | b |\n")
	if got := runBeginnings(dev); !slices.Equal(got, []string{"x/a.go"}) {
		t.Errorf("runBeginnings = %q, want [x/a.go]", got)
	}

	readme := parseDoc("README.md", "# w\n\n## Quick start\n\n## The files\n")
	prose := parseDoc("docs/a.md", "The README describes it (*Windows machines*, *The files*).\n\nSee *Quick start* in the README.\n\nA *word* here, with no mention.\n")
	if got := readmeSectionProblems([]doc{prose}, readme); len(got) != 1 || !strings.Contains(got[0], `"Windows machines"`) || !strings.Contains(got[0], "docs/a.md:1") {
		t.Errorf("README sections named in prose: %q, want one problem, of Windows machines", got)
	}

	d := parseDoc("docs/x.md", "The catalogue has 12 claims.\n\n```\nShown: 3 of 12 (on Windows: 0).\n```\nall 13 claims\n")
	if got := figureProblems([]doc{d}, 12); len(got) != 1 || !strings.Contains(got[0], `"13 claims"`) {
		t.Errorf("figures against 12 claims: %q, want one problem, of 13 claims", got)
	}

	ids := []string{"NET-01", "NET-02", "NET-03", "INF-10", "WEB-01"}
	code := map[string][]string{"networking": {"NET-02"}, "workloads": {"WEB-01", "NET-03"}}
	good := parseDoc("docs/suites.md", "| area | claims |\n|---|---|\n| `networking` | NET-01..03, INF-10 |\n| `workloads` | WEB-01 |\n")
	if got := suiteProblems(good, ids[:4:4], map[string][]string{"networking": {"NET-02"}, "workloads": nil}); len(got) != 1 || !strings.Contains(got[0], "WEB-01") {
		t.Errorf("a row naming a claim the catalogue lacks: %q", got)
	}
	if got := suiteProblems(good, ids, code); len(got) != 1 || !strings.Contains(got[0], "NET-03") {
		t.Errorf("a claim named by another suite's code: %q", got)
	}
	short := parseDoc("docs/suites.md", "| `networking` | NET-01..02 |\n| `workloads` | WEB-01 |\n")
	if got := suiteProblems(short, ids, map[string][]string{"networking": nil, "workloads": nil}); len(got) != 2 {
		t.Errorf("claims in no row: %q, want NET-03 and INF-10", got)
	}

	lines := []kubelines.Line{{Minor: 35, Version: "v1.35.4", EndOfLife: "2027-02-28"}, {Minor: 36, Version: "v1.36.3", EndOfLife: "2027-06-28"}}
	table := parseDoc("docs/cluster.md", "| line | release | end of life | containerd |\n|---|---|---|---|\n"+
		"| 1.35 (oldest) | v1.35.4 | 2027-02-28 | "+lines[0].ContainerdSupport()+" |\n"+
		"| 1.36 | v1.36.2 | 2027-06-28 | "+lines[1].ContainerdSupport()+" |\n")
	if got := linesProblems(table, lines, lines[1], lines[0]); len(got) != 2 {
		t.Errorf("a stale release and a missing default mark: %q", got)
	}

	spans := parseDoc("docs/x.md", "See `testing/wsmantest`, `make bench`, `suites/` and `images/probe:v0.1`.\n```sh\nmake e2e SUITE=x\n$ make nothing\n```\n")
	if got := treePaths(spans)[1]; !slices.Equal(got, []string{"testing/wsmantest", "suites", "images/probe"}) {
		t.Errorf("paths read: %q", got)
	}
	if got := makeTargets(spans); !slices.Equal(got[1], []string{"bench"}) || !slices.Equal(got[3], []string{"e2e"}) || !slices.Equal(got[4], []string{"nothing"}) {
		t.Errorf("make targets read: %v", got)
	}
}
