#!/usr/bin/env node
// The `kube-informer-envtest` bin of package.json: runs the command with the process's argv and streams.

import { runEnvtestCommand } from './command.js';

process.exitCode = await runEnvtestCommand(process.argv.slice(2), {
  env: process.env,
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
});
