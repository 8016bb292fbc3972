// pscheck: a syntax check of PowerShell scripts on machines without
// PowerShell, with the tree-sitter PowerShell grammar (its WebAssembly
// parser, run by web-tree-sitter).
//
//   node pscheck.mjs PATH...
//
// Each PATH is a .ps1 file, or a directory searched for .ps1 files
// (node_modules, .git and _output are skipped, and so are symbolic links). Every syntax error is printed
// as FILE:LINE:COLUMN: what, and the exit code is 1 when there is one, 2 when
// the check could not run (no files, no parser).
import { lstatSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const skipDirs = new Set(['node_modules', '.git', '_output']);

// findScripts lists the .ps1 files of the paths, sorted.
export function findScripts(paths) {
  const out = [];
  const walk = (p) => {
    const st = lstatSync(p);
    if (st.isDirectory()) {
      for (const name of readdirSync(p)) {
        if (!skipDirs.has(name)) walk(join(p, name));
      }
    } else if (p.toLowerCase().endsWith('.ps1')) {
      out.push(p);
    }
  };
  for (const p of paths) {
    if (statSync(p).isFile()) out.push(p);
    else walk(p);
  }
  return [...new Set(out)].sort();
}

// loadParser returns a parser for PowerShell and the versions it runs with.
export async function loadParser() {
  // V8 would optimise the grammar's large parse tables on background
  // threads for some 15 CPU seconds, and node waits for that before it
  // exits: the baseline compiler alone parses these scripts in milliseconds.
  setFlagsFromString('--liftoff-only');
  const { Parser, Language } = await import('web-tree-sitter');
  await Parser.init();
  const grammar = require.resolve('tree-sitter-powershell/tree-sitter-powershell.wasm');
  const language = await Language.load(grammar);
  const parser = new Parser();
  parser.setLanguage(language);
  const version = (name) => JSON.parse(readFileSync(join(here, 'node_modules', name, 'package.json'), 'utf8')).version;
  return { parser, versions: `tree-sitter-powershell ${version('tree-sitter-powershell')}, web-tree-sitter ${version('web-tree-sitter')}` };
}

// syntaxErrors returns the syntax errors of a script's text, each with its
// line and column (1-based) and what is wrong.
export function syntaxErrors(parser, text) {
  const tree = parser.parse(text);
  const errors = [];
  const visit = (node) => {
    if (node.isMissing) {
      errors.push({ line: node.startPosition.row + 1, column: node.startPosition.column + 1, what: `missing ${JSON.stringify(node.type)}` });
      return;
    }
    if (node.type === 'ERROR') {
      const first = node.text.split('\n')[0].trim().slice(0, 60);
      errors.push({ line: node.startPosition.row + 1, column: node.startPosition.column + 1, what: `cannot parse from here: ${JSON.stringify(first)}` });
      return;
    }
    if (node.hasError) {
      for (const child of node.children) visit(child);
    }
  };
  visit(tree.rootNode);
  tree.delete();
  return errors;
}

async function main(args) {
  if (args.length === 0) {
    console.error('usage: node pscheck.mjs PATH... (.ps1 files or directories)');
    return 2;
  }
  let files;
  try {
    files = findScripts(args);
  } catch (err) {
    console.error(`pscheck: ${err.message}`);
    return 2;
  }
  if (files.length === 0) {
    console.error(`pscheck: no .ps1 file under ${args.join(', ')}`);
    return 2;
  }
  let parser, versions;
  try {
    ({ parser, versions } = await loadParser());
  } catch (err) {
    console.error(`pscheck: cannot load the PowerShell grammar (run npm ci in ${relative(process.cwd(), here) || '.'}): ${err.message}`);
    return 2;
  }
  let bad = 0;
  const perDir = new Map();
  for (const file of files) {
    const shown = relative(process.cwd(), file) || file;
    const errors = syntaxErrors(parser, readFileSync(file, 'utf8'));
    for (const e of errors) console.error(`${shown}:${e.line}:${e.column}: syntax error: ${e.what}`);
    if (errors.length > 0) bad++;
    perDir.set(dirname(shown), (perDir.get(dirname(shown)) || 0) + 1);
  }
  if (bad > 0) {
    console.error(`pscheck: ${bad} of ${files.length} PowerShell files do not parse (${versions})`);
    return 1;
  }
  const dirs = [...perDir].map(([d, n]) => `${d} ${n}`).join(', ');
  console.log(`pscheck: ${files.length} PowerShell files parse (${versions}): ${dirs}`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
