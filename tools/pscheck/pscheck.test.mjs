// Tests of pscheck: node --test tools/pscheck/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const script = join(here, 'pscheck.mjs');
const repo = join(here, '..', '..');

function pscheck(...paths) {
  const r = spawnSync(process.execPath, [script, ...paths], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function scratch(files) {
  const dir = mkdtempSync(join(tmpdir(), 'pscheck-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

test('a step script with a brace taken out fails, naming the file and the line', () => {
  // firewall.ps1 as embedded, less the closing brace of its if/elseif.
  const good = readFileSync(join(repo, 'infra/windows/scripts/firewall.ps1'), 'utf8');
  const lines = good.split('\n');
  const closing = lines.findIndex((l) => l === '}');
  assert.ok(closing > 0, 'firewall.ps1 has a line holding only }');
  lines.splice(closing, 1);
  const dir = scratch({ 'firewall.ps1': lines.join('\n'), 'ok.ps1': good });
  const r = pscheck(dir);
  assert.equal(r.code, 1, r.out + r.err);
  assert.match(r.err, /firewall\.ps1:\d+:\d+: syntax error/);
  assert.doesNotMatch(r.err, /ok\.ps1:/);
  assert.match(r.err, /1 of 2 PowerShell files do not parse/);
});

test('the line of an unclosed string is named', () => {
  const dir = scratch({ 'bad.ps1': "$a = 1\n$b = 2\nWrite-Output \"unclosed\n$c = 3\n" });
  const r = pscheck(join(dir, 'bad.ps1'));
  assert.equal(r.code, 1);
  assert.match(r.err, /bad\.ps1:3:\d+: syntax error/);
});

test('a missing parenthesis is named', () => {
  const dir = scratch({ 'paren.ps1': "function f {\n    param([string] $a\n    $a\n}\n" });
  const r = pscheck(dir);
  assert.equal(r.code, 1);
  assert.match(r.err, /paren\.ps1:2:\d+: syntax error/);
});

test('good scripts pass, with a count per directory', () => {
  const dir = scratch({ 'a/one.ps1': "Write-Output 'one'\n", 'b/two.ps1': "if ($true) { 'two' }\n", 'node_modules/x/bad.ps1': '{' });
  const r = pscheck(dir);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /pscheck: 2 PowerShell files parse/);
});

test('no script at all is an error, not a pass', () => {
  const dir = scratch({ 'readme.txt': 'nothing' });
  const r = pscheck(dir);
  assert.equal(r.code, 2);
  assert.match(r.err, /no \.ps1 file/);
});
