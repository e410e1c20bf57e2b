#!/usr/bin/env node
// The `kube-informer-webhook` executable: `kube-informer-webhook manifests <module>...` (see docs/webhooks.md).

import process from 'node:process';
import { runWebhookCommand } from './cli.js';

process.exitCode = await runWebhookCommand(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  cwd: process.cwd(),
});
