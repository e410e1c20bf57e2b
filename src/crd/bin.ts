#!/usr/bin/env node
// The `kube-informer` executable: `kube-informer crd generate|types ...` (see docs/custom-resources.md).

import process from 'node:process';
import { runCrdCommand } from './cli.js';

const [group, ...rest] = process.argv.slice(2);
if (group !== 'crd') {
  process.stderr.write('usage: kube-informer crd <generate|types> ...\n');
  process.exitCode = 2;
} else {
  process.exitCode = await runCrdCommand(rest, {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    cwd: process.cwd(),
  });
}
