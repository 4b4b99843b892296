// An AITask from a file for `kubectl aiops simulate -f`, one not applied yet: one YAML or JSON
// document at any version the CRD serves, held to that version's schema as the apiserver
// holds it (types, enums, bounds, required and undeclared fields, the CEL rules: the check
// conversion itself uses, api/conversion/bounds.ts), refused with the field path of the first
// violations, then converted to v2 as the conversion webhook would. Pure.

import { violations } from '../api/conversion/bounds.ts';
import { convert, versionOf } from '../api/conversion/convert.ts';
import { objectSchema } from '../api/crd.ts';
import { API_VERSION, type AITask } from '../api/schema/v2.ts';
import { fromYaml } from '../lib/yaml.ts';
import { CliError } from './errors.ts';

/** Violations named in the refusal; the rest are counted. */
const NAMED = 3;

/** The AITask in `text` (the file `path`) at v2, or CliError saying what is wrong and where. */
export function taskFromFile(text: string, path: string): AITask {
  let doc: unknown;
  try {
    doc = fromYaml(text);
  } catch (err) {
    throw new CliError(`${path} is not YAML: ${(err as Error).message.split('\n')[0] ?? ''}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new CliError(`${path} holds no object: give one AITask`);
  const o = doc as Record<string, unknown>;
  if (o['kind'] !== 'AITask' || typeof o['apiVersion'] !== 'string')
    throw new CliError(
      `${path} is a ${typeof o['kind'] === 'string' ? o['kind'] : 'document without kind'}: give one AITask (apiVersion aiops.example.com/v2, kind AITask)`,
    );
  let version;
  try {
    version = versionOf(o['apiVersion']);
  } catch (err) {
    throw new CliError(`${path}: ${(err as Error).message}`);
  }
  const spec = objectSchema(version).properties?.['spec'];
  const found = spec === undefined ? [] : violations(spec, o['spec'], 'spec');
  if (o['spec'] === undefined) found.unshift({ path: 'spec', why: 'required' });
  if (found.length > 0) {
    const named = found.slice(0, NAMED).map((v) => `${v.path}: ${v.why}`);
    const more = found.length > NAMED ? `; and ${found.length - NAMED} more` : '';
    throw new CliError(`${path} is not a valid AITask at ${version}: ${named.join('; ')}${more}`);
  }
  const object = { ...o };
  delete object['status'];
  try {
    return convert(object, API_VERSION, { key: undefined }) as unknown as AITask;
  } catch (err) {
    throw new CliError(`${path} cannot be read at v2: ${(err as Error).message}`);
  }
}
