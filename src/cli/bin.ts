#!/usr/bin/env node
// The `kube-informer` executable of package.json: runs the command with the process's arguments, streams, directory and environment.

import process from 'node:process';
import { runCommand } from './main.js';

process.exitCode = await runCommand(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  cwd: process.cwd(),
  env: process.env,
});
