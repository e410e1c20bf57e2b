// The command's arguments: one `node:util` parseArgs (strict) for every verb, an unknown flag named with the closest known one, and the help text built from the same table.

import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ErrorCodes, KubeInformerError } from '../core/errors.js';
import { closestOption } from '../core/options.js';

/** Where the command writes, where it resolves relative paths from, and its environment. */
export interface CommandIo {
  /** Receives the output (YAML, TypeScript, a path) and the help asked for. */
  stdout: (text: string) => void;
  /** Receives progress, warnings, errors and the usage after a usage error. */
  stderr: (text: string) => void;
  /** The directory relative paths are resolved from. */
  cwd: string;
  /** The environment (envtest reads `KUBE_INFORMER_CACHE`, `XDG_DATA_HOME`, `HOME`). */
  env: NodeJS.ProcessEnv;
}

/** Exit codes of `kube-informer`: 0 done, 1 failed (the reason on stderr), 2 a usage error (the usage on stderr). */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** The package's version, read from its package.json (`dist/cli/` and `src/cli/` are two levels down). */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** A flag of a verb. */
export interface FlagSpec {
  /** `string` takes a value (`--ca-file ca.pem` or `--ca-file=ca.pem`); `boolean` does not. */
  type: 'string' | 'boolean';
  /** The one-letter form (`p` for `-p`). */
  short?: string;
  /** The value's name in the help (`<file>`); string flags only. */
  value?: string;
  /** One line for the help. */
  description: string;
}

/** One verb of a subcommand (`crd generate`, `webhook manifests`, `envtest use`). */
export interface Verb {
  /** The word after the subcommand; `''` for a subcommand that is its own one verb (`init <name>`). */
  name: string;
  /** One line for the subcommand's help. */
  summary: string;
  /** The positional arguments in the usage line, e.g. `<module>...`. */
  positionals: string;
  /** Fewest and most positional arguments. */
  arity: { min: number; max: number };
  /** Its flags by long name (`--help` is added to every verb). */
  flags: Readonly<Record<string, FlagSpec>>;
  /** What follows the flags in the verb's help: what it does, examples. */
  details: string;
  /** Does the work; resolves when done, throws {@link UsageError} for a usage error and anything else for a failure. */
  run(args: ParsedArgs, io: CommandIo): Promise<void>;
}

/** A subcommand of `kube-informer`: a name and its verbs (one verb named `''`: the subcommand takes its arguments at once). */
export interface Subcommand {
  /** `crd`, `webhook`, `envtest`. */
  name: string;
  /** One line for `kube-informer --help`. */
  summary: string;
  /** Its verbs. */
  verbs: readonly Verb[];
}

/** A verb's arguments after parsing: flag values by long name, and the positionals. */
export interface ParsedArgs {
  /** Each flag given (string flags: the last value; boolean flags: `true`). */
  flags: Readonly<Record<string, string | boolean | undefined>>;
  /** The positional arguments in order. */
  positionals: readonly string[];
}

/** A usage error: exit code 2, the message and the verb's usage on stderr. */
export class UsageError extends KubeInformerError {
  constructor(message: string) {
    super(ErrorCodes.INVALID_OPTION, message);
  }
}

const HELP: FlagSpec = { type: 'boolean', short: 'h', description: 'print this help' };

/** The verb's flags with `--help`. */
function flagsOf(verb: Verb): Record<string, FlagSpec> {
  return { ...verb.flags, help: HELP };
}

/**
 * Parses `argv` (the words after the verb) against the verb's flags, strictly: an unknown flag, a string
 * flag without its value, a boolean flag given a value or a wrong number of positionals is a
 * {@link UsageError} naming the flag (with the closest known flag when one is close).
 */
export function parseVerbArgs(verb: Verb, argv: readonly string[]): ParsedArgs & { help: boolean } {
  const flags = flagsOf(verb);
  const options: NonNullable<ParseArgsConfig['options']> = Object.fromEntries(Object.entries(flags).map(([name, f]) => [name, f.short === undefined ? { type: f.type } : { type: f.type, short: f.short }]));
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    const result = parseArgs({ args: [...argv], options, strict: true, allowPositionals: true });
    // No flag is declared `multiple`, so no value is an array.
    parsed = { values: result.values as Record<string, string | boolean | undefined>, positionals: result.positionals };
  } catch (err) {
    throw new UsageError(describeParseError(err as Error & { code?: string }, flags));
  }
  const help = parsed.values.help === true;
  delete parsed.values.help;
  if (!help) {
    const n = parsed.positionals.length;
    if (n < verb.arity.min) throw new UsageError(`needs ${verb.positionals} (got ${n === 0 ? 'nothing' : parsed.positionals.join(' ')})`);
    if (n > verb.arity.max) throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[verb.arity.max])}${verb.arity.max === 0 ? ' (it takes none)' : ''}`);
  }
  return { flags: parsed.values, positionals: parsed.positionals, help };
}

/** parseArgs' error in our words: the flag named, the closest known one suggested. */
function describeParseError(err: Error & { code?: string }, flags: Record<string, FlagSpec>): string {
  const known = Object.keys(flags);
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const flag = /'([^']+)'/.exec(err.message)?.[1] ?? '';
    const bare = flag.replace(/^-+/, '').split('=')[0];
    const short = Object.entries(flags).find(([, f]) => f.short !== undefined && f.short === bare)?.[0];
    const long = flag.startsWith('--') || bare.length > 1;
    const prefixed = known.filter((k) => k.startsWith(bare));
    const suggestion = short ?? (long ? (closestOption(bare, known) ?? (prefixed.length === 1 ? prefixed[0] : undefined)) : undefined);
    const hint = suggestion !== undefined ? `did you mean --${suggestion}?` : `known flags: ${known.map((k) => `--${k}`).join(', ')}`;
    return `unknown flag ${flag} (${hint})`;
  }
  if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    // "Option '-p, --print <value>' argument missing", "Option '--help' does not take an argument".
    const flag = /'(-[^', ]+)/.exec(err.message)?.[1] ?? '';
    const name = Object.entries(flags).find(([long, f]) => flag === `--${long}` || (f.short !== undefined && flag === `-${f.short}`))?.[0];
    const spec = name === undefined ? undefined : flags[name];
    return spec?.type === 'string' ? `flag ${flag} needs a value (${spec.value ?? '<value>'})` : `flag ${flag} takes no value`;
  }
  return err.message;
}

/** The one-line usage of a verb: `kube-informer crd types <crd.yaml>... [--import-from <module>]`. */
export function usageLine(sub: string, verb: Verb): string {
  const flags = Object.entries(verb.flags).map(([name, f]) => `[--${name}${f.type === 'string' ? ` ${f.value ?? '<value>'}` : ''}]`);
  // A subcommand that is its own verb has the name '': the filter leaves it out.
  return ['kube-informer', sub, verb.name, verb.positionals, ...flags].filter((w) => w !== '').join(' ');
}

/** The help of one verb: its usage, its flags, and what it does. */
export function verbHelp(sub: string, verb: Verb): string {
  const rows = Object.entries(flagsOf(verb)).map(([name, f]) => [`${f.short === undefined ? '    ' : `-${f.short}, `}--${name}${f.type === 'string' ? ` ${f.value ?? '<value>'}` : ''}`, f.description]);
  const width = Math.max(...rows.map(([left]) => left.length));
  return [
    `Usage: ${usageLine(sub, verb)}`,
    '',
    verb.summary,
    '',
    'Flags:',
    ...rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`),
    '',
    verb.details.trimEnd(),
    '',
    EXIT_CODES,
  ].join('\n');
}

/** The help of a subcommand: its verbs. */
export function subcommandHelp(sub: Subcommand): string {
  const width = Math.max(...sub.verbs.map((v) => v.name.length));
  return [
    `Usage: kube-informer ${sub.name} <${sub.verbs.map((v) => v.name).join('|')}> [flags]`,
    '',
    sub.summary,
    '',
    'Commands:',
    ...sub.verbs.map((v) => `  ${v.name.padEnd(width)}  ${v.summary}`),
    '',
    `Run \`kube-informer ${sub.name} <command> --help\` for its flags.`,
    '',
    EXIT_CODES,
  ].join('\n');
}

/** The exit codes, as every help prints them. */
export const EXIT_CODES = 'Exit codes: 0 done, 1 failed (the reason on stderr), 2 usage error (the usage on stderr).\n';

/**
 * Runs `kube-informer <sub> <verb> ...`: `argv` is the words after the subcommand. `help`, `--help`
 * and `-h` print help on stdout (exit 0); a usage error prints the message and the usage on stderr
 * (exit 2); a failure prints `kube-informer <sub> <verb>: <reason>` on stderr (exit 1).
 */
export async function runSubcommand(sub: Subcommand, argv: readonly string[], io: CommandIo): Promise<number> {
  // A subcommand of one verb without a name (`kube-informer rbac <module>`) takes its arguments at once.
  if (sub.verbs.length === 1 && sub.verbs[0].name === '') return runVerb(sub, sub.verbs[0], argv[0] === 'help' ? ['--help'] : argv, io);
  const [word, ...rest] = argv;
  if (word === undefined) {
    io.stderr(`kube-informer ${sub.name}: no command given\n\n${subcommandHelp(sub)}`);
    return EXIT.usage;
  }
  if (word === 'help' || word === '--help' || word === '-h') {
    const verb = sub.verbs.find((v) => v.name === rest[0]);
    io.stdout(verb === undefined ? subcommandHelp(sub) : verbHelp(sub.name, verb));
    return EXIT.ok;
  }
  const verb = sub.verbs.find((v) => v.name === word);
  if (verb === undefined) {
    const close = closestOption(word, sub.verbs.map((v) => v.name));
    io.stderr(`kube-informer ${sub.name}: unknown command ${JSON.stringify(word)}${close === undefined ? '' : ` (did you mean ${close}?)`}\n\n${subcommandHelp(sub)}`);
    return EXIT.usage;
  }
  return runVerb(sub, verb, rest, io);
}

/** Parses `argv` (the words after the verb) and runs the verb: its help, a usage error (2), a failure (1), or done (0). */
async function runVerb(sub: Subcommand, verb: Verb, argv: readonly string[], io: CommandIo): Promise<number> {
  const command = ['kube-informer', sub.name, verb.name].filter((w) => w !== '').join(' ');
  try {
    const parsed = parseVerbArgs(verb, argv);
    if (parsed.help) {
      io.stdout(verbHelp(sub.name, verb));
      return EXIT.ok;
    }
    await verb.run(parsed, io);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`${command}: ${err.message}\n\nUsage: ${usageLine(sub.name, verb)}\nRun \`${command} --help\` for more.\n`);
      return EXIT.usage;
    }
    io.stderr(`${command}: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.failure;
  }
}
