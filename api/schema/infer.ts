// Type-level bridge from the OpenAPI v3 schemas (written once, as `const` objects) to
// the TypeScript types of each AITask version, so the schema stays the one source of
// truth: changing a property in the schema changes the type the compiler checks.
// Covers exactly the subset of OpenAPI the AITask schemas use.

/** The structural OpenAPI v3 subset the AITask schemas are written in. */
export interface JSONSchemaProps {
  readonly type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  readonly description?: string;
  readonly properties?: Readonly<Record<string, JSONSchemaProps>>;
  readonly required?: readonly string[];
  readonly items?: JSONSchemaProps;
  readonly enum?: readonly (string | number)[];
  readonly default?: unknown;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly maxItems?: number;
  readonly maxProperties?: number;
  readonly pattern?: string;
  readonly format?: string;
  readonly nullable?: boolean;
  readonly additionalProperties?: JSONSchemaProps;
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
  readonly 'x-kubernetes-validations'?: readonly {
    readonly rule: string;
    readonly message: string;
    readonly fieldPath?: string;
    readonly reason?: string;
  }[];
}

type Simplify<T> = { [K in keyof T]: T[K] } & {};

type RequiredKeys<S> = S extends { readonly required: readonly (infer R)[] } ? R & string : never;

type InferObject<S> = S extends { readonly properties: infer P }
  ? Simplify<
      { -readonly [K in keyof P as K extends RequiredKeys<S> ? K : never]: Infer<P[K]> } & {
        -readonly [K in keyof P as K extends RequiredKeys<S> ? never : K]?: Infer<P[K]>;
      }
    >
  : S extends { readonly additionalProperties: infer A }
    ? Record<string, Infer<A>>
    : Record<string, unknown>;

/** The TypeScript type of a value valid against schema `S`. */
export type Infer<S> = S extends { readonly enum: readonly (infer E)[] }
  ? E
  : S extends { readonly type: 'string' }
    ? string
    : S extends { readonly type: 'integer' | 'number' }
      ? number
      : S extends { readonly type: 'boolean' }
        ? boolean
        : S extends { readonly type: 'array'; readonly items: infer I }
          ? Infer<I>[]
          : S extends { readonly type: 'object' }
            ? InferObject<S>
            : unknown;
