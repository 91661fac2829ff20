#!/usr/bin/env node
// Checks types/prompt-api-runtime.d.ts against the Prompt API spec's WebIDL.
//
//   node tests/types/check-idl.mjs [SPEC.txt] [DECLARATIONS.d.ts] [--parser=webidl2|builtin] [--dump]
//
// SPEC defaults to ../shared/spec/prompt-api-spec.txt beside the repository, the
// declarations to types/prompt-api-runtime.d.ts. The IDL blocks are cut out of the
// spec's text and parsed with `webidl2` (the npm package, or the copy the wpt-runner
// package ships in testharness/), else with the small parser below (--parser=builtin
// forces it; --dump prints the parsed model as JSON and stops, to compare the two).
// The definitions the spec's IDL uses from other specs (Availability, CreateMonitor,
// CreateMonitorCallback, DestroyableModel, QuotaExceededError) are checked too, from
// the IDL transcribed in REFERENCED below.
//
// With the TypeScript compiler API it then checks that every IDL interface, mixin,
// dictionary, enum, typedef and callback has its declaration, and:
//   - interfaces: a global value (a class or a var) unless NO_GLOBAL says why not;
//     the IDL's inheritance and mixins; each attribute (static or not, readonly or
//     not, its type), operation (its parameters, optional ones included, and return
//     type) and constructor; no public constructor where the IDL has none; the
//     members the IDL says exist "only in extension contexts" are optional (a web
//     page lacks them), the others are not;
//   - dictionaries: inheritance, and each member (required <=> not optional, its type);
//   - enums: exactly the IDL's string values; typedefs and callbacks: their types.
// Types are compared by mutual assignability with the IDL type mapped to TypeScript
// (DOMString -> string, sequence<T> -> T[], FrozenArray<T> -> ReadonlyArray<T>, T? ->
// T | null, ...), except where DEVIATIONS documents a narrower or broader type. It
// prints every mismatch and exits 1 on any; extensions (members and types the IDL
// lacks) are listed for information.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = resolve(HERE, '..', '..');
const require = createRequire(join(REPO_ROOT, 'package.json'));

// -- the IDL this spec uses from other specs ---------------------------------------

/** Transcribed from the Writing Assistance APIs spec ("Shared APIs") and from WebIDL. */
const REFERENCED = [
  {
    source: 'Writing Assistance APIs (https://webmachinelearning.github.io/writing-assistance-apis/)',
    idl: `
[Exposed=Window, SecureContext]
interface CreateMonitor : EventTarget {
  attribute EventHandler ondownloadprogress;
};

callback CreateMonitorCallback = undefined (CreateMonitor monitor);

enum Availability {
  "unavailable",
  "downloadable",
  "downloading",
  "available"
};

interface mixin DestroyableModel {
  undefined destroy();
};
`,
  },
  {
    source: 'WebIDL (https://webidl.spec.whatwg.org/#quotaexceedederror)',
    idl: `
[Exposed=*, Serializable]
interface QuotaExceededError : DOMException {
  constructor(optional DOMString message = "", optional QuotaExceededErrorOptions options = {});

  readonly attribute double? quota;
  readonly attribute double? requested;
};

dictionary QuotaExceededErrorOptions {
  double quota;
  double requested;
};
`,
  },
];

/** IDL interfaces the runtime defines no global for (the types declare no value). */
const NO_GLOBAL = {
  LanguageModelParams: 'extension contexts only; params() resolves with a plain object',
  CreateMonitor: 'the runtime passes its monitor to the callback but defines no CreateMonitor global',
};

/**
 * Where the declarations' type differs from the IDL's on purpose. `narrower`: every
 * value of the TypeScript type is one of the IDL type's (checked: TS assignable to
 * IDL); `broader`: TypeScript also accepts more (checked: IDL assignable to TS).
 */
const DEVIATIONS = {
  'typedef LanguageModelPromptResult': {
    relation: 'narrower',
    why: "the runtime's result lists hold only text and tool-call contents",
  },
  'LanguageModelToolCall.constructor': {
    relation: 'broader', why: 'the init may spell callId as callID (Chromium)',
  },
  'LanguageModelToolSuccess.constructor': {
    relation: 'broader', why: 'the init may spell callId as callID (Chromium)',
  },
  'LanguageModelToolError.constructor': {
    relation: 'broader', why: 'the init may spell callId as callID (Chromium)',
  },
};

// -- arguments ------------------------------------------------------------------------

const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const specPath = resolve(positional[0] ?? join(REPO_ROOT, '..', 'shared', 'spec', 'prompt-api-spec.txt'));
const dtsPath = resolve(positional[1] ?? join(REPO_ROOT, 'types', 'prompt-api-runtime.d.ts'));
const parserFlag = flags.find((f) => f.startsWith('--parser='))?.slice('--parser='.length);
const dumpOnly = flags.includes('--dump');
for (const flag of flags) {
  if (flag !== '--dump' && !flag.startsWith('--parser=')) usage(`unknown option ${flag}`);
}
if (parserFlag !== undefined && !['webidl2', 'builtin'].includes(parserFlag)) usage(`unknown parser ${parserFlag}`);

function usage(message) {
  console.error(`check-idl: ${message}\nusage: node tests/types/check-idl.mjs [SPEC.txt] [DECLARATIONS.d.ts] [--parser=webidl2|builtin] [--dump]`);
  process.exit(2);
}

// -- cutting the IDL out of the spec's text --------------------------------------------

const DEFINITION_START =
  /^(?:\[|(?:partial\s+)?(?:interface|dictionary|enum|typedef|callback|namespace)\b|[A-Za-z_]\w*\s+includes\s+[A-Za-z_]\w*\s*;)/;

/** The spec's IDL definitions (with the comments just before and inside them). */
export function extractIdl(text) {
  const out = [];
  let comments = [];
  let inside = false;
  let depth = 0;
  for (const line of text.split(/\r?\n/)) {
    if (!inside) {
      if (/^\s*\/\//.test(line)) {
        comments.push(line);
        continue;
      }
      if (!DEFINITION_START.test(line)) {
        comments = [];
        continue;
      }
      inside = true;
      depth = 0;
      out.push(...comments);
      comments = [];
    }
    out.push(line);
    const code = line.replace(/"[^"]*"/g, '""').replace(/\/\/.*$/, '');
    for (const ch of code) {
      if ('{(['.includes(ch)) depth++;
      else if ('})]'.includes(ch)) depth--;
    }
    if (depth === 0 && /;\s*$/.test(code)) {
      inside = false;
      out.push('');
    }
  }
  if (inside) throw new Error('the last IDL definition of the spec does not end');
  return out.join('\n');
}

/**
 * "Name.member" of the members whose comment says they exist only in extension
 * contexts, and the names of such definitions.
 */
export function extensionOnly(idl) {
  const members = new Set();
  const definitions = new Set();
  let current = null;
  let pending = false;
  for (const line of idl.split('\n')) {
    const trimmed = line.trim();
    if (trimmed.startsWith('//')) {
      if (/available in extension/i.test(trimmed)) pending = true;
      continue;
    }
    if (trimmed === '' || trimmed.startsWith('[')) continue;
    const start = /^(?:partial\s+)?(?:interface(?:\s+mixin)?|dictionary|enum|typedef|callback)\s+(\w+)/.exec(trimmed);
    if (start && current === null) {
      if (pending) definitions.add(start[1]);
      if (/\{/.test(trimmed) && !/\}\s*;/.test(trimmed)) current = start[1];
    } else if (current !== null && /^\}\s*;/.test(trimmed)) {
      current = null;
    } else if (current !== null && pending) {
      const name = /(\w+)\s*\(/.exec(trimmed)?.[1] ?? /(\w+)\s*(?:=[^;]*)?;\s*$/.exec(trimmed)?.[1];
      if (name) members.add(`${current}.${name}`);
    }
    pending = false;
  }
  return { members, definitions };
}

// -- parsing: webidl2, or the builtin parser, into one model ---------------------------
//
// Model: {kind: 'interface' | 'mixin' | 'dictionary' | 'enum' | 'typedef' | 'callback'
// | 'includes', name, inheritance, members, values, type, args, target, mixin}; a member
// {kind: 'attribute' | 'operation' | 'constructor' | 'field', name, static, readonly,
// required, type, args}; an argument {name, optional, variadic, type}; a type
// {kind: 'named' | 'generic' | 'union', name, args, members, nullable}.

function loadWebIDL2() {
  for (const id of ['webidl2', 'wpt-runner/testharness/webidl2.js']) {
    try {
      const module = require(id);
      if (typeof module.parse === 'function') return { parse: module.parse, from: id };
    } catch {
      // not installed: try the next
    }
  }
  return null;
}

function fromWebIDL2Type(t) {
  let type;
  if (t.union) type = { kind: 'union', members: t.idlType.map(fromWebIDL2Type) };
  else if (t.generic) type = { kind: 'generic', name: t.generic, args: t.idlType.map(fromWebIDL2Type) };
  else type = { kind: 'named', name: t.idlType };
  return { ...type, nullable: !!t.nullable };
}

function fromWebIDL2Args(args) {
  return args.map((a) => ({
    name: a.name, optional: !!a.optional, variadic: !!a.variadic, type: fromWebIDL2Type(a.idlType),
  }));
}

function fromWebIDL2(ast) {
  return ast.map((d) => {
    switch (d.type) {
      case 'interface':
      case 'interface mixin':
      case 'dictionary':
        if (d.partial) throw new Error(`partial ${d.type} ${d.name} is not supported`);
        return {
          kind: d.type === 'interface mixin' ? 'mixin' : d.type,
          name: d.name,
          inheritance: d.inheritance ?? null,
          members: d.members.map((m) => {
            switch (m.type) {
              case 'attribute':
                return {
                  kind: 'attribute', name: m.name, static: m.special === 'static',
                  readonly: !!m.readonly, type: fromWebIDL2Type(m.idlType),
                };
              case 'operation':
                if (m.special && m.special !== 'static') throw new Error(`${m.special} operations are not supported`);
                return {
                  kind: 'operation', name: m.name, static: m.special === 'static',
                  type: fromWebIDL2Type(m.idlType), args: fromWebIDL2Args(m.arguments),
                };
              case 'constructor':
                return { kind: 'constructor', name: 'constructor', args: fromWebIDL2Args(m.arguments) };
              case 'field':
                return { kind: 'field', name: m.name, required: !!m.required, type: fromWebIDL2Type(m.idlType) };
              default:
                throw new Error(`${d.name}: ${m.type} members are not supported`);
            }
          }),
        };
      case 'enum':
        return { kind: 'enum', name: d.name, values: d.values.map((v) => v.value) };
      case 'typedef':
        return { kind: 'typedef', name: d.name, type: fromWebIDL2Type(d.idlType) };
      case 'callback':
        return {
          kind: 'callback', name: d.name, type: fromWebIDL2Type(d.idlType), args: fromWebIDL2Args(d.arguments),
        };
      case 'includes':
        return { kind: 'includes', name: `${d.target} includes ${d.includes}`, target: d.target, mixin: d.includes };
      default:
        throw new Error(`${d.type} definitions are not supported`);
    }
  });
}

/** A small recursive-descent parser for the IDL this spec uses. */
export function parseBuiltin(text) {
  const tokens = [];
  const lexer = /\s+|\/\/[^\n]*|\/\*[\s\S]*?\*\/|("[^"]*")|(-?(?:Infinity|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?))|([A-Za-z_][\w-]*)|(\.\.\.|[{}()[\]<>;:,=?*.-])|(.)/gy;
  for (let m; (m = lexer.exec(text)) !== null && m[0] !== '';) {
    if (m[5] !== undefined) throw new Error(`unexpected character ${JSON.stringify(m[5])} in the IDL`);
    const value = m[1] ?? m[2] ?? m[3] ?? m[4];
    if (value !== undefined) tokens.push({ value, string: m[1] !== undefined, number: m[2] !== undefined });
  }
  let i = 0;
  const peek = (k = 0) => tokens[i + k]?.value;
  const next = () => {
    if (i >= tokens.length) throw new Error('unexpected end of the IDL');
    return tokens[i++].value;
  };
  const eat = (value) => {
    if (peek() === value) {
      i++;
      return true;
    }
    return false;
  };
  const expect = (value) => {
    const got = next();
    if (got !== value) throw new Error(`IDL: expected ${value}, got ${got} (token ${i})`);
  };
  const identifier = () => {
    const token = tokens[i];
    if (!token || token.string || token.number || !/^[A-Za-z_]/.test(token.value)) {
      throw new Error(`IDL: expected a name, got ${token?.value}`);
    }
    i++;
    return token.value;
  };
  const skipBalanced = (open, close) => {
    expect(open);
    for (let depth = 1; depth > 0;) {
      const t = next();
      if (t === open) depth++;
      else if (t === close) depth--;
    }
  };
  const extendedAttributes = () => {
    while (peek() === '[') skipBalanced('[', ']');
  };
  const GENERICS = ['Promise', 'sequence', 'FrozenArray', 'ObservableArray', 'record'];
  const type = () => {
    extendedAttributes();
    let result;
    if (eat('(')) {
      const members = [type()];
      while (eat('or')) members.push(type());
      expect(')');
      result = { kind: 'union', members };
    } else if (GENERICS.includes(peek()) && peek(1) === '<') {
      const name = next();
      expect('<');
      const args = [type()];
      while (eat(',')) args.push(type());
      expect('>');
      result = { kind: 'generic', name, args };
    } else {
      let name = identifier();
      if (name === 'unsigned' || name === 'unrestricted') name += ` ${identifier()}`;
      if (/(^|\s)long$/.test(name) && peek() === 'long') name += ` ${next()}`;
      result = { kind: 'named', name };
    }
    return { ...result, nullable: eat('?') };
  };
  const defaultValue = () => {
    if (peek() === '[') skipBalanced('[', ']');
    else if (peek() === '{') skipBalanced('{', '}');
    else next();
  };
  const argumentList = () => {
    expect('(');
    const args = [];
    while (!eat(')')) {
      extendedAttributes();
      const optional = eat('optional');
      const t = type();
      const variadic = eat('...');
      const name = identifier();
      if (eat('=')) defaultValue();
      args.push({ name, optional, variadic, type: t });
      if (!eat(',')) {
        expect(')');
        break;
      }
    }
    return args;
  };
  const interfaceMember = () => {
    extendedAttributes();
    if (eat('constructor')) {
      const args = argumentList();
      expect(';');
      return { kind: 'constructor', name: 'constructor', args };
    }
    const isStatic = eat('static');
    const readonly = eat('readonly');
    if (eat('attribute')) {
      const t = type();
      const name = identifier();
      expect(';');
      return { kind: 'attribute', name, static: isStatic, readonly, type: t };
    }
    if (readonly) throw new Error('IDL: readonly without attribute');
    if (['getter', 'setter', 'deleter', 'stringifier', 'inherit', 'const', 'iterable', 'maplike', 'setlike', 'async'].includes(peek())) {
      throw new Error(`IDL: ${peek()} members are not supported`);
    }
    const t = type();
    const name = identifier();
    const args = argumentList();
    expect(';');
    return { kind: 'operation', name, static: isStatic, type: t, args };
  };
  const field = () => {
    extendedAttributes();
    const required = eat('required');
    const t = type();
    const name = identifier();
    if (eat('=')) defaultValue();
    expect(';');
    return { kind: 'field', name, required, type: t };
  };
  const definitions = [];
  while (i < tokens.length) {
    extendedAttributes();
    if (eat('partial')) throw new Error('partial definitions are not supported');
    const keyword = next();
    if (keyword === 'interface' || keyword === 'dictionary') {
      const mixin = keyword === 'interface' && eat('mixin');
      const name = identifier();
      const inheritance = eat(':') ? identifier() : null;
      expect('{');
      const members = [];
      while (!eat('}')) members.push(keyword === 'dictionary' ? field() : interfaceMember());
      expect(';');
      definitions.push({ kind: mixin ? 'mixin' : keyword, name, inheritance, members });
    } else if (keyword === 'enum') {
      const name = identifier();
      expect('{');
      const values = [];
      while (!eat('}')) {
        const token = tokens[i++];
        if (!token?.string) throw new Error(`IDL: enum ${name} holds a non-string`);
        values.push(token.value.slice(1, -1));
        eat(',');
      }
      expect(';');
      definitions.push({ kind: 'enum', name, values });
    } else if (keyword === 'typedef') {
      const t = type();
      const name = identifier();
      expect(';');
      definitions.push({ kind: 'typedef', name, type: t });
    } else if (keyword === 'callback') {
      if (peek() === 'interface') throw new Error('callback interfaces are not supported');
      const name = identifier();
      expect('=');
      const t = type();
      const args = argumentList();
      expect(';');
      definitions.push({ kind: 'callback', name, type: t, args });
    } else if (peek() === 'includes') {
      next();
      const mixin = identifier();
      expect(';');
      definitions.push({ kind: 'includes', name: `${keyword} includes ${mixin}`, target: keyword, mixin });
    } else {
      throw new Error(`IDL: unexpected ${keyword}`);
    }
  }
  return definitions;
}

function parseIdl(text, parser) {
  if (parser.name === 'webidl2') return fromWebIDL2(parser.parse(text));
  return parseBuiltin(text);
}

// -- IDL types as TypeScript -----------------------------------------------------------

const PRIMITIVES = {
  DOMString: 'string', USVString: 'string', ByteString: 'string', boolean: 'boolean',
  byte: 'number', octet: 'number', short: 'number', 'unsigned short': 'number', long: 'number',
  'unsigned long': 'number', 'long long': 'number', 'unsigned long long': 'number', float: 'number',
  'unrestricted float': 'number', double: 'number', 'unrestricted double': 'number', bigint: 'bigint',
  object: 'object', any: 'any', undefined: 'void', symbol: 'symbol',
  // An EventHandler is nullable by definition; its event may be an Event subtype,
  // so it is checked by __EventHandler, not by __Eq.
  EventHandler: '((this: any, ev: Event) => any) | null',
};

function typeToTS(t) {
  let text;
  if (t.kind === 'union') text = t.members.map(typeToTS).join(' | ');
  else if (t.kind === 'generic') {
    const args = t.args.map(typeToTS);
    switch (t.name) {
      case 'Promise': text = `Promise<${args[0]}>`; break;
      case 'sequence': case 'ObservableArray': text = `Array<${args[0]}>`; break;
      case 'FrozenArray': text = `ReadonlyArray<${args[0]}>`; break;
      case 'record': text = `Record<${args[0]}, ${args[1]}>`; break;
      default: throw new Error(`generic ${t.name} is not supported`);
    }
  } else text = PRIMITIVES[t.name] ?? t.name;
  return t.nullable ? `(${text}) | null` : `(${text})`;
}

function isEventHandler(t) {
  return t.kind === 'named' && t.name === 'EventHandler' && !t.nullable;
}

function typeToIDL(t) {
  let text;
  if (t.kind === 'union') text = `(${t.members.map(typeToIDL).join(' or ')})`;
  else if (t.kind === 'generic') text = `${t.name}<${t.args.map(typeToIDL).join(', ')}>`;
  else text = t.name;
  return t.nullable ? `${text}?` : text;
}

function argsToTS(args) {
  return `[${args.map((a) => (a.variadic ? `...${a.name}: Array<${typeToTS(a.type)}>`
    : `${a.name}${a.optional ? '?' : ''}: ${typeToTS(a.type)}`)).join(', ')}]`;
}

function argsToIDL(args) {
  return `(${args.map((a) => `${a.optional ? 'optional ' : ''}${typeToIDL(a.type)}${a.variadic ? '...' : ''} ${a.name}`).join(', ')})`;
}

// -- the checks ------------------------------------------------------------------------

const ts = require('typescript');

const COMPILER_OPTIONS = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ES2022,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts', 'lib.dom.asynciterable.d.ts'],
  types: [],
  // The declarations themselves are checked; TypeScript's own lib files are not.
  skipDefaultLibCheck: true,
};

const CHECKS_PATH = join(dirname(dtsPath), '__idl_checks__.ts');

const HELPERS = `
type __Eq<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type __Sub<A, B> = [A] extends [B] ? true : false;
type __NotNewable<T> = T extends abstract new (...args: any) => any ? false : true;
type __EventHandler<A> = null extends A
  ? ([Exclude<A, null>] extends [(this: any, ev: infer E) => any] ? ([E] extends [Event] ? true : false) : false)
  : false;
declare function __check<T extends true>(): void;
`;

function program(checks, oldProgram) {
  const host = ts.createCompilerHost(COMPILER_OPTIONS, true);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, ...rest) => (resolve(fileName) === CHECKS_PATH
    ? ts.createSourceFile(fileName, checks, languageVersion, true)
    : getSourceFile(fileName, languageVersion, ...rest));
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (fileName) => resolve(fileName) === CHECKS_PATH || fileExists(fileName);
  const readFile = host.readFile.bind(host);
  host.readFile = (fileName) => (resolve(fileName) === CHECKS_PATH ? checks : readFile(fileName));
  return ts.createProgram({ rootNames: [dtsPath, CHECKS_PATH], options: COMPILER_OPTIONS, host, oldProgram });
}

function formatDiagnostic(d) {
  const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
  if (!d.file) return message;
  const { line, character } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
  return `${d.file.fileName}:${line + 1}:${character + 1}: ${message}`;
}

function main() {
  const specText = readFileSync(specPath, 'utf8');
  const idl = extractIdl(specText);
  const webidl2 = parserFlag === 'builtin' ? null : loadWebIDL2();
  if (parserFlag === 'webidl2' && !webidl2) {
    console.error('check-idl: webidl2 is not installed (npm ci)');
    process.exit(2);
  }
  const parser = webidl2 ? { name: 'webidl2', parse: webidl2.parse, from: webidl2.from } : { name: 'builtin' };
  const sources = [{ source: `the spec (${specPath})`, idl }, ...REFERENCED];
  const definitions = [];
  for (const { source, idl: text } of sources) {
    for (const d of parseIdl(text, parser)) definitions.push({ ...d, source });
  }
  const specCount = definitions.filter((d) => d.source === sources[0].source).length;
  if (specCount === 0) throw new Error(`no IDL found in ${specPath}`);
  if (dumpOnly) {
    console.log(JSON.stringify(definitions.map(({ source: _source, ...d }) => d), null, 1));
    return 0;
  }
  const extension = extensionOnly(idl);
  const byName = new Map(definitions.filter((d) => d.kind !== 'includes').map((d) => [d.name, d]));

  const problems = [];
  const notes = [];
  const extensions = [];
  const problem = (where, what) => problems.push(`${where}: ${what}`);

  // Pass 1: declarations, names, optionality, readonly-ness; the type checks to run.
  const first = program(HELPERS);
  const dtsFile = first.getSourceFile(dtsPath);
  if (!dtsFile) throw new Error(`cannot read ${dtsPath}`);
  const ownDiagnostics = [
    ...first.getSyntacticDiagnostics(dtsFile), ...first.getSemanticDiagnostics(dtsFile),
  ];
  for (const d of ownDiagnostics) problem('declarations', `does not compile: ${formatDiagnostic(d)}`);
  const checker = first.getTypeChecker();
  const checksFile = first.getSourceFile(CHECKS_PATH);
  const globals = new Map();
  for (const symbol of checker.getSymbolsInScope(checksFile, ts.SymbolFlags.Type | ts.SymbolFlags.Value)) {
    globals.set(symbol.getName(), symbol);
  }
  /** Whether a global symbol is declared in the declarations file. */
  const declaredHere = (symbol) => !!symbol?.declarations?.some((d) => d.getSourceFile() === dtsFile);
  const typeSymbol = (name) => {
    const symbol = globals.get(name);
    return symbol && (symbol.flags & ts.SymbolFlags.Type) && declaredHere(symbol) ? symbol : null;
  };

  const typeChecks = []; // {where, actual, expected (TypeScript), idlText, relation}
  const addTypeCheck = (where, actual, expected, idlText, relation = 'equal') => {
    typeChecks.push({ where, actual, expected, idlText, relation });
  };
  const isOptional = (prop) => (prop.flags & ts.SymbolFlags.Optional) !== 0;
  const isReadonly = (prop) => {
    const decls = prop.declarations ?? [];
    if (decls.some((d) => ts.isSetAccessorDeclaration(d))) return false;
    if (decls.some((d) => ts.isGetAccessorDeclaration(d))) return true;
    return decls.some((d) => (ts.getCombinedModifierFlags(d) & ts.ModifierFlags.Readonly) !== 0);
  };
  const typeText = (prop, node) => checker.typeToString(checker.getTypeOfSymbolAtLocation(prop, node));
  const idlMembersOf = (d) => {
    // Own members, inherited IDL members and mixin members: what the IDL defines on d.
    const names = new Set(d.members.map((m) => m.name));
    for (let p = byName.get(d.inheritance); p; p = byName.get(p.inheritance)) {
      for (const m of p.members) names.add(m.name);
    }
    for (const inc of definitions.filter((x) => x.kind === 'includes' && x.target === d.name)) {
      for (const m of byName.get(inc.mixin)?.members ?? []) names.add(m.name);
    }
    return names;
  };
  const ownExtras = (name, type, idlNames, baseName) => {
    const base = baseName && !byName.has(baseName) ? typeSymbol(baseName) ?? globals.get(baseName) : null;
    const baseType = base && base.flags & ts.SymbolFlags.Type ? checker.getDeclaredTypeOfSymbol(base) : null;
    for (const prop of checker.getPropertiesOfType(type)) {
      if (idlNames.has(prop.getName())) continue;
      if (baseType && checker.getPropertyOfType(baseType, prop.getName())) continue;
      if (!prop.declarations?.some((d) => d.getSourceFile() === dtsFile)) continue;
      extensions.push(`${name}.${prop.getName()}`);
    }
  };

  let checkedItems = 0;
  for (const d of definitions) {
    if (d.kind === 'includes') {
      checkedItems++;
      const target = byName.get(d.target);
      const mixin = byName.get(d.mixin);
      if (!target) problem(d.name, `interface ${d.target} is not defined in the IDL`);
      if (!mixin) problem(d.name, `mixin ${d.mixin} is not defined in the IDL (nor in REFERENCED)`);
      else if (typeSymbol(d.target) && typeSymbol(d.mixin)) {
        addTypeCheck(d.name, d.target, d.mixin, `${d.target} includes ${d.mixin}`, 'narrower');
      }
      continue;
    }
    checkedItems++;
    const where = d.name;
    const symbol = typeSymbol(d.name);
    if (!symbol) {
      problem(where, `missing (IDL ${d.kind} ${d.name}, from ${d.source})`);
      continue;
    }
    if (d.kind === 'enum') {
      const type = checker.getDeclaredTypeOfSymbol(symbol);
      const parts = type.isUnion() ? type.types : [type];
      const values = new Set();
      for (const part of parts) {
        if (part.isStringLiteral()) values.add(part.value);
        else problem(where, `enum holds the non-string-literal ${checker.typeToString(part)}`);
      }
      for (const value of d.values) {
        checkedItems++;
        if (!values.has(value)) problem(`${where} "${value}"`, 'enum value missing');
      }
      for (const value of values) if (!d.values.includes(value)) problem(`${where} "${value}"`, 'not a value of the IDL enum');
      continue;
    }
    if (d.kind === 'typedef') {
      const key = `typedef ${d.name}`;
      const deviation = DEVIATIONS[key];
      addTypeCheck(key, d.name, typeToTS(d.type), typeToIDL(d.type), deviation?.relation);
      if (deviation) notes.push(`${key}: ${deviation.relation} than the IDL's ${typeToIDL(d.type)}: ${deviation.why}`);
      continue;
    }
    if (d.kind === 'callback') {
      addTypeCheck(`callback ${d.name}`, d.name, `(...args: ${argsToTS(d.args)}) => ${typeToTS(d.type)}`,
        `${typeToIDL(d.type)} ${argsToIDL(d.args)}`);
      continue;
    }

    // interfaces, mixins, dictionaries
    const instance = checker.getDeclaredTypeOfSymbol(symbol);
    const hasValue = (symbol.flags & ts.SymbolFlags.Value) !== 0;
    let statics = null;
    if (d.kind === 'interface') {
      if (hasValue) {
        statics = checker.getTypeOfSymbolAtLocation(symbol, checksFile);
      } else if (NO_GLOBAL[d.name]) {
        notes.push(`${d.name}: interface without a global value (${NO_GLOBAL[d.name]})`);
      } else {
        problem(where, 'no global value (declare a class or a var: the IDL interface is exposed)');
      }
      if (hasValue && !d.members.some((m) => m.kind === 'constructor')) {
        addTypeCheck(`${where} (no constructor)`, `typeof ${d.name}`, null, 'no constructor', 'not-newable');
      }
    }
    if (d.inheritance) {
      if (!globals.get(d.inheritance)) problem(where, `its IDL parent ${d.inheritance} is not declared`);
      else addTypeCheck(`${where} : ${d.inheritance}`, d.name, d.inheritance, `: ${d.inheritance}`, 'narrower');
    }
    if (extension.definitions.has(d.name)) notes.push(`${d.name}: the IDL says it exists only in extension contexts`);
    ownExtras(d.name, instance, idlMembersOf(d), d.inheritance);
    if (statics) {
      const idlStatics = new Set(d.members.filter((m) => m.static).map((m) => m.name));
      for (const prop of checker.getPropertiesOfType(statics)) {
        const name = prop.getName();
        if (name === 'prototype' || idlStatics.has(name)) continue;
        if (prop.declarations?.some((x) => x.getSourceFile() === dtsFile)) extensions.push(`${d.name}.${name} (static)`);
      }
    }

    for (const m of d.members) {
      checkedItems++;
      const memberWhere = m.kind === 'constructor' ? `${d.name}.constructor` : `${d.name}.${m.name}`;
      const idlText = m.kind === 'constructor' ? `constructor${argsToIDL(m.args)}`
        : m.kind === 'operation' ? `${m.static ? 'static ' : ''}${typeToIDL(m.type)} ${m.name}${argsToIDL(m.args)}`
          : m.kind === 'attribute' ? `${m.static ? 'static ' : ''}${m.readonly ? 'readonly ' : ''}attribute ${typeToIDL(m.type)} ${m.name}`
            : `${m.required ? 'required ' : ''}${typeToIDL(m.type)} ${m.name}`;
      if (m.kind === 'constructor') {
        if (!statics) continue; // reported above
        const signatures = statics.getConstructSignatures();
        if (signatures.length === 0) {
          problem(memberWhere, `missing (IDL: ${idlText})`);
          continue;
        }
        const deviation = DEVIATIONS[memberWhere];
        if (deviation) notes.push(`${memberWhere}: ${deviation.relation} than the IDL's: ${deviation.why}`);
        addTypeCheck(memberWhere, `ConstructorParameters<typeof ${d.name}>`, argsToTS(m.args), idlText,
          deviation?.relation);
        continue;
      }
      const owner = m.static ? statics : instance;
      if (!owner) continue; // a static member without a value: reported above
      const prop = checker.getPropertyOfType(owner, m.name);
      if (!prop) {
        problem(memberWhere, `missing (IDL: ${idlText})`);
        continue;
      }
      const optional = isOptional(prop);
      const access = m.static ? `(typeof ${d.name})['${m.name}']` : `${d.name}['${m.name}']`;
      const value = optional ? `Exclude<${access}, undefined>` : access;
      if (m.kind === 'field') {
        if (m.required && optional) problem(memberWhere, `optional, but the IDL says required (IDL: ${idlText})`);
        if (!m.required && !optional) problem(memberWhere, `required, but the IDL member is optional (IDL: ${idlText})`);
        addTypeCheck(memberWhere, value, typeToTS(m.type), idlText, DEVIATIONS[memberWhere]?.relation);
        continue;
      }
      const extensionMember = extension.members.has(`${d.name}.${m.name}`);
      if (extensionMember && !optional) {
        problem(memberWhere, 'the IDL has it only in extension contexts: declare it optional (a web page lacks it)');
      }
      if (!extensionMember && optional) problem(memberWhere, `optional, but the IDL member always exists (IDL: ${idlText})`);
      if (extensionMember) notes.push(`${memberWhere}: extension contexts only (optional)`);
      if (m.kind === 'attribute') {
        const readonly = isReadonly(prop);
        if (m.readonly && !readonly) problem(memberWhere, `not readonly (IDL: ${idlText})`);
        if (!m.readonly && readonly) problem(memberWhere, `readonly, but the IDL attribute is writable (IDL: ${idlText})`);
        const relation = isEventHandler(m.type) ? 'event-handler' : DEVIATIONS[memberWhere]?.relation;
        addTypeCheck(memberWhere, value, typeToTS(m.type), idlText, relation);
      } else {
        const fn = optional ? `NonNullable<${access}>` : access;
        const callable = checker.getTypeOfSymbolAtLocation(prop, checksFile);
        if (checker.getNonNullableType(callable).getCallSignatures().length === 0) {
          problem(memberWhere, `not a method (${typeText(prop, checksFile)}; IDL: ${idlText})`);
          continue;
        }
        addTypeCheck(`${memberWhere} (parameters)`, `Parameters<${fn}>`, argsToTS(m.args), argsToIDL(m.args),
          DEVIATIONS[`${memberWhere} (parameters)`]?.relation);
        addTypeCheck(`${memberWhere} (return type)`, `ReturnType<${fn}>`, typeToTS(m.type), typeToIDL(m.type),
          DEVIATIONS[`${memberWhere} (return type)`]?.relation);
      }
    }
  }

  // Pass 2: the type checks, one statement a line, in a file of their own; each
  // checked type is also named (__T0, __T1...) to look for an `any` inside it.
  const lines = HELPERS.split('\n');
  const lineOf = new Map();
  typeChecks.forEach((c, k) => {
    const statements = [];
    if (c.relation === 'not-newable') statements.push(`__check<__NotNewable<${c.actual}>>();`);
    else if (c.relation === 'event-handler') statements.push(`__check<__EventHandler<${c.actual}>>();`);
    else {
      const test = c.relation === 'narrower' ? `__Sub<${c.actual}, ${c.expected}>`
        : c.relation === 'broader' ? `__Sub<${c.expected}, ${c.actual}>` : `__Eq<${c.actual}, ${c.expected}>`;
      statements.push(`__check<${test}>();`);
      // IDL any: the declaration must accept every value (any or unknown).
      if (c.expected === '(any)') statements.push(`__check<__Sub<unknown, ${c.actual}>>();`);
      statements.push(`type __T${k} = ${c.actual};`);
      c.alias = `__T${k}`;
    }
    for (const statement of statements) {
      lineOf.set(lines.length, c);
      lines.push(statement);
    }
  });
  const second = program(lines.join('\n'), first);
  const file = second.getSourceFile(CHECKS_PATH);
  const failed = new Set();
  for (const diagnostic of second.getSemanticDiagnostics(file)) {
    const { line } = file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    const c = lineOf.get(line);
    if (!c) {
      problem('checks', formatDiagnostic(diagnostic));
      continue;
    }
    if (failed.has(c)) continue;
    failed.add(c);
    const relation = c.relation === 'narrower' ? 'not assignable to'
      : c.relation === 'broader' ? 'does not accept all of' : 'not the same as';
    if (c.relation === 'not-newable') problem(c.where, 'has a public constructor, but the IDL interface has none');
    else if (c.relation === 'event-handler') {
      problem(c.where, `not an event handler: a function of one Event, or null (IDL: ${c.idlText})`);
    } else if (/__Sub<unknown,/.test(lines[line])) {
      problem(c.where, `must accept any value (any or unknown) (IDL: ${c.idlText})`);
    } else problem(c.where, `type ${relation} the IDL's (IDL: ${c.idlText}; as TypeScript: ${c.expected})`);
  }
  // Mutual assignability cannot see an `any` (Promise<any> "equals" Promise<void>):
  // walk unions and type arguments for one where the IDL type has none.
  const secondChecker = second.getTypeChecker();
  const aliases = new Map(secondChecker.getSymbolsInScope(file, ts.SymbolFlags.TypeAlias)
    .map((symbol) => [symbol.getName(), symbol]));
  const containsAny = (type, depth = 0) => {
    if (type.flags & ts.TypeFlags.Any) return true;
    if (depth > 6) return false;
    if (type.isUnionOrIntersection()) return type.types.some((t) => containsAny(t, depth + 1));
    if (type.flags & ts.TypeFlags.Object && type.objectFlags & ts.ObjectFlags.Reference) {
      return secondChecker.getTypeArguments(type).some((t) => containsAny(t, depth + 1));
    }
    return false;
  };
  for (const c of typeChecks) {
    if (!c.alias || failed.has(c) || /\bany\b/.test(c.idlText)) continue;
    const symbol = aliases.get(c.alias);
    if (symbol && containsAny(secondChecker.getDeclaredTypeOfSymbol(symbol))) {
      problem(c.where, `declared with an any the IDL type lacks: ${secondChecker.typeToString(
        secondChecker.getDeclaredTypeOfSymbol(symbol))} (IDL: ${c.idlText})`);
    }
  }

  // The report.
  const referenced = definitions.length - specCount;
  console.log(`check-idl: ${specCount} IDL definitions from ${specPath} and ${referenced} referenced ones `
    + `(parser: ${parser.name === 'webidl2' ? `webidl2, ${parser.from}` : 'builtin'}), `
    + `${checkedItems} items and ${typeChecks.length} types checked against ${dtsPath}`);
  if (notes.length) {
    console.log('\nNotes (documented differences):');
    for (const n of notes) console.log(`  ${n}`);
  }
  const idlNames = new Set(byName.keys());
  const extraTypes = [...globals.values()]
    .filter((s) => declaredHere(s) && !idlNames.has(s.getName()))
    .map((s) => s.getName());
  if (extensions.length || extraTypes.length) {
    console.log('\nExtensions (not in the IDL):');
    if (extensions.length) console.log(`  members: ${extensions.join(', ')}`);
    if (extraTypes.length) console.log(`  declarations: ${extraTypes.join(', ')}`);
  }
  if (problems.length) {
    console.log(`\nMISMATCHES (${problems.length}):`);
    for (const p of problems) console.log(`  ${p}`);
    return 1;
  }
  console.log('\nOK: every IDL definition, member and enum value has its declaration.');
  return 0;
}

try {
  process.exitCode = main();
} catch (error) {
  console.error(`check-idl: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 2;
}
