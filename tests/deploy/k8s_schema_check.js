#!/usr/bin/env node
// Validates Kubernetes objects against the Kubernetes 1.27 API's JSON
// schemas, as strictly as `kubectl apply --validate=strict`: an unknown
// field is an error (the "standalone-strict" reading), as is a wrong type,
// a missing required field or a bad format (quantities, int32, ...).
//
//   node k8s_schema_check.js [--expect-invalid] TOOLS_DIR OBJECTS.json...
//
// --expect-invalid (the negative test): every object must be rejected.
// TOOLS_DIR holds node_modules of tests/deploy/k8s-tools/package.json
// (deploy/local/deps.sh installs it). Each OBJECTS.json is an array of
// {"source": "...", "object": {...}} (k8s_policy.py to-json writes them).
// Core kinds use kubernetes-models 4.3.1's schemas (generated from the
// Kubernetes 1.27.1 OpenAPI document) compiled here with every object schema
// closed (additionalProperties: false); custom resources (ServiceMonitor)
// use the validator compiled from their CRD by @kubernetes-models/
// prometheus-operator, which does not reject unknown fields (neither does
// the API server: it prunes them). An object of any other kind fails, and so
// does one of an alpha or beta API version: kubernetes-models also keeps
// versions that 1.27 no longer serves (policy/v1beta1, autoscaling/v2beta2,
// ...), and the manifests use stable APIs only.
// Exit 0: every object valid (with --expect-invalid: every one invalid);
// 1: otherwise (each error printed); 2: usage.
'use strict';

const fs = require('fs');
const path = require('path');

const args = process.argv.slice(2);
const expectInvalid = args[0] === '--expect-invalid';
const [toolsDir, ...files] = expectInvalid ? args.slice(1) : args;
if (!toolsDir || files.length === 0) {
  process.stderr.write('usage: k8s_schema_check.js [--expect-invalid] TOOLS_DIR OBJECTS.json...\n');
  process.exit(2);
}
const modules = path.join(toolsDir, 'node_modules');
const fromDir = (dir, name) => require(require.resolve(name, {paths: [dir]}));

// Every model class exported by a package's group/version directories.
function modelClasses(pkgDir) {
  const classes = [];
  const visit = (dir, depth) => {
    for (const entry of fs.readdirSync(dir, {withFileTypes: true})) {
      if (!entry.isDirectory() || entry.name.startsWith('_') || entry.name === 'node_modules') {
        continue;
      }
      const sub = path.join(dir, entry.name);
      if (fs.existsSync(path.join(sub, 'index.js'))) {
        for (const value of Object.values(require(sub))) {
          if (typeof value === 'function' && value.apiVersion && value.kind) classes.push(value);
        }
      }
      if (depth < 2) visit(sub, depth + 1);
    }
  };
  visit(pkgDir, 0);
  return classes;
}

// Core API: capture the raw schemas kubernetes-models registers with its
// validator, then compile them ourselves, closed.
const coreDir = path.join(modules, 'kubernetes-models');
const coreValidate = fromDir(coreDir, '@kubernetes-models/validate');
const rawSchemas = new Map();
coreValidate.register = (id, schema) => {
  if (!rawSchemas.has(id)) rawSchemas.set(id, schema);
};
const schemaIdOfKind = new Map();  // "apps/v1 Deployment" -> schema id
for (const cls of modelClasses(coreDir)) {
  const symbols = Object.getOwnPropertySymbols(cls.prototype);
  const idSymbol = symbols.find((s) => s.description === 'SCHEMA_ID');
  const addSymbol = symbols.find((s) => s.description === 'ADD_SCHEMA');
  if (!idSymbol || !addSymbol) continue;
  cls.prototype[addSymbol]();
  schemaIdOfKind.set(`${cls.apiVersion} ${cls.kind}`, cls.prototype[idSymbol]);
}
if (schemaIdOfKind.size < 50 || !schemaIdOfKind.has('apps/v1 Deployment')) {
  process.stderr.write(`found only ${schemaIdOfKind.size} kinds in ${coreDir}: not the expected package\n`);
  process.exit(2);
}

function closed(schema) {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== 'object') return schema;
  const out = {};
  for (const [key, value] of Object.entries(schema)) out[key] = closed(value);
  if (out.properties && out.additionalProperties === undefined &&
      !out['x-kubernetes-preserve-unknown-fields']) {
    out.additionalProperties = false;
  }
  return out;
}

const Ajv = fromDir(coreDir, 'ajv');
const addFormats = fromDir(coreDir, 'ajv-formats');
const ajv = new Ajv({strictTypes: false, allErrors: true});
addFormats(ajv);
for (const name of ['int32', 'int64', 'double', 'float']) ajv.addFormat(name, true);
ajv.addFormat('byte', /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/);
ajv.addFormat('quantity',
              /^[+-]?(?:\d+|\d+\.\d+|\d+\.|\.\d+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?$/);
ajv.addFormat('int-or-string', true);
ajv.addFormat('string', true);
for (const [id, schema] of rawSchemas) ajv.addSchema(closed(schema), id);

// Custom resources: the packages' own validators.
const crdClasses = new Map();
for (const cls of modelClasses(path.join(modules, '@kubernetes-models', 'prometheus-operator'))) {
  crdClasses.set(`${cls.apiVersion} ${cls.kind}`, cls);
}

// oneOf [X, null] fails as a whole when X fails: report X's errors only.
function usefulErrors(errors) {
  return errors.filter((e) => !(e.keyword === 'oneOf' || (e.keyword === 'type' && e.params.type === 'null')));
}

let failures = 0;
let checked = 0;
for (const file of files) {
  for (const {source, object} of JSON.parse(fs.readFileSync(file, 'utf8'))) {
    const what = `${source}: ${object.kind}/${(object.metadata || {}).name}`;
    const key = `${object.apiVersion} ${object.kind}`;
    checked++;
    let messages = [];
    const version = String(object.apiVersion || '').split('/').pop();
    if (!crdClasses.has(key) && /^v\d+(alpha|beta)\d*$/.test(version)) {
      messages = [`${object.apiVersion} is not a stable API version (Kubernetes 1.27: use the v1/v2 one)`];
    } else if (schemaIdOfKind.has(key)) {
      const validate = ajv.getSchema(schemaIdOfKind.get(key));
      if (!validate(object)) {
        messages = usefulErrors(validate.errors).map(
            (e) => `${e.instancePath || '/'} ${e.message}` +
                (e.params.additionalProperty ? ` (${e.params.additionalProperty})` : ''));
      }
    } else if (crdClasses.has(key)) {
      try {
        new (crdClasses.get(key))(object).validate();
      } catch (err) {
        messages = [err.message];
      }
    } else {
      messages = [`no schema for ${key} in Kubernetes 1.27 or the known CRDs`];
    }
    if (messages.length > 0) {
      failures++;
      for (const m of messages) process.stdout.write(`${what}: ${m}\n`);
    } else if (expectInvalid) {
      process.stdout.write(`${what}: accepted, but it is invalid\n`);
    }
  }
}
if (expectInvalid) {
  process.stdout.write(`schema negative test: ${checked} bad objects, ${failures} rejected\n`);
  process.exit(checked > 0 && failures === checked ? 0 : 1);
}
process.stdout.write(`schema: ${checked} objects checked, ${failures} invalid\n`);
process.exit(failures === 0 ? 0 : 1);
