import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  executeJsonPath,
  goJson,
  JsonPathEvalError,
  JsonPathParseError,
  MAX_TEMPLATE_LENGTH,
  parseJsonPath,
} from './jsonpath.ts';

const run = (template: string, data: unknown, asJson = false): string =>
  executeJsonPath(parseJsonPath(template), data, asJson);

/** The input of https://kubernetes.io/docs/reference/kubectl/jsonpath/ (and client-go's TestKubernetes). */
const nodes = {
  kind: 'List',
  items: [
    {
      kind: 'None',
      metadata: { name: '127.0.0.1', labels: { 'kubernetes.io/hostname': '127.0.0.1' } },
      status: {
        capacity: { cpu: '4' },
        ready: true,
        addresses: [{ type: 'LegacyHostIP', address: '127.0.0.1' }],
      },
    },
    {
      kind: 'None',
      metadata: { name: '127.0.0.2' },
      status: {
        capacity: { cpu: '8' },
        ready: false,
        addresses: [
          { type: 'LegacyHostIP', address: '127.0.0.2' },
          { type: 'another', address: '127.0.0.3' },
        ],
      },
    },
  ],
  users: [
    { name: 'myself', user: {} },
    { name: 'e2e', user: { username: 'admin', password: 'secret' } },
  ],
};

/** client-go's TestStructInput store, as JSON. */
const store = {
  Name: 'jsonpath',
  Book: [
    { Category: 'reference', Author: 'Nigel Rees', Title: 'Sayings of the Centurey', Price: 8.95 },
    { Category: 'fiction', Author: 'Evelyn Waugh', Title: 'Sword of Honour', Price: 12.99 },
    { Category: 'fiction', Author: 'Herman Melville', Title: 'Moby Dick', Price: 8.99 },
  ],
  Bicycle: [
    { Color: 'red', Price: 19.95, IsNew: true },
    { Color: 'green', Price: 20.01, IsNew: false },
  ],
  Labels: { 'web/html': 15, 'k8s-app': 20 },
  Employees: { jason: 'manager', dan: 'clerk' },
};

const points = [
  { id: 'i1', x: 4, y: -5 },
  { id: 'i2', x: -2, y: -5, z: 1 },
  { id: 'i3', x: 8, y: 3 },
  { id: 'i4', x: -6, y: -1 },
  { id: 'i5', x: 0, y: 2, z: 1 },
  { id: 'i6', x: 1, y: 4 },
  { id: 'i7', x: null, y: 4 },
];

void test("kubectl's documented examples print what the docs show", () => {
  const cases: [string, string][] = [
    ['the plain text', 'the plain text'],
    ['{.kind}', 'List'],
    ["{['kind']}", 'List'],
    ['{$.kind}', 'List'],
    ['{..name}', '127.0.0.1 127.0.0.2 myself e2e'],
    ['{.items[*].metadata.name}', '127.0.0.1 127.0.0.2'],
    ['{.users[0].name}', 'myself'],
    ["{.items[*]['metadata.name', 'status.capacity']}", '127.0.0.1 127.0.0.2 {"cpu":"4"} {"cpu":"8"}'],
    ['{.users[?(@.name=="e2e")].user.password}', 'secret'],
    [
      '{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}',
      '[127.0.0.1, {"cpu":"4"}] [127.0.0.2, {"cpu":"8"}] ',
    ],
    ["{range .items[*]}{.metadata.name}{'\\t'}{end}", '127.0.0.1\t127.0.0.2\t'],
    ['{range .items[*]}{.metadata.name}{"\\n"}{end}', '127.0.0.1\n127.0.0.2\n'],
    ['{.items[0].metadata.labels.kubernetes\\.io/hostname}', '127.0.0.1'],
    ['{.items[?(@.metadata.labels.kubernetes\\.io/hostname=="127.0.0.1")].kind}', 'None'],
    ['{.items[?(@..ready==true)].metadata.name}', '127.0.0.1'],
    ['{range .items[*]}{.metadata.name}, {end}{.kind}', '127.0.0.1, 127.0.0.2, List'],
    ['{.items[*].status.addresses[*].address}', '127.0.0.1 127.0.0.2 127.0.0.3'],
    [
      '{range .items[*]}{range .status.addresses[*]}{.address}, {end}{end}',
      '127.0.0.1, 127.0.0.2, 127.0.0.3, ',
    ],
    ['{.items[*].status.addresses[?(@.type=="another")].address}', '127.0.0.3'],
    ['{.items[-1].metadata.name}', '127.0.0.2'],
    ['{.users[1].user}', '{"password":"secret","username":"admin"}'],
    ['{.nosuch}{.items[5:5]}', ''],
  ];
  for (const [template, want] of cases) assert.equal(run(template, nodes), want, template);
});

void test("client-go's own table: store, slices, points", () => {
  const cases: [string, unknown, string][] = [
    ['hello {.Name}', store, 'hello jsonpath'],
    ['{$.Labels.web/html}', store, '15'],
    ['{$.Employees.jason}', store, 'manager'],
    ['{.Labels.k8s-app}', store, '20'],
    ['{.Bicycle[*].Color}', store, 'red green'],
    ['{.Book[*].Author}', store, 'Nigel Rees Evelyn Waugh Herman Melville'],
    ['{range .Bicycle[*]}{ "{" }{ @.* }{ "} " }{end}', store, '{red 19.95 true} {green 20.01 false} '],
    ['{..Price}', store, '8.95 12.99 8.99 19.95 20.01'],
    ['{...Price}', store, '8.95 12.99 8.99 19.95 20.01'],
    [
      '{.Bicycle}',
      store,
      '[{"Color":"red","IsNew":true,"Price":19.95},{"Color":"green","IsNew":false,"Price":20.01}]',
    ],
    [
      '{.Book[-1:]}',
      store,
      '{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}',
    ],
    ['{..Book[2].Title}', store, 'Moby Dick'],
    ['{.Bicycle[?(@.IsNew==true)].Color}', store, 'red'],
    ['{.Book[?(@.Price<9)].Title}', store, 'Sayings of the Centurey Moby Dick'],
    ['{.Book[?(@.Price>=12.99)].Title}', store, 'Sword of Honour'],
    ['{.Book[?(@.Category!="fiction")].Author}', store, 'Nigel Rees'],
    ['{..}', [1, 2, 3], '[1,2,3]'],
    ['{[?(@<5)]}', [2, 6, 3, 7], '2 3'],
    ['{"{"}', null, '{'],
    ['{[1,3,4]}', [0, 1, 2, 3, 4], '1 3 4'],
    ['{[0:2]}', ['Monday', 'Tudesday'], 'Monday Tudesday'],
    ['{[:4:2]}', [1, 2, 3, 4], '1 3'],
    ['{[1::2]}', [1, 2, 3, 4], '2 4'],
    ['{[-2]}', [1, 2, 3, 4], '3'],
    ['{[*]}', [], ''],
    ['{[?(@.z)].id}', points, 'i2 i5'],
    ["{[0]['id']}", points, 'i1'],
    ["{[-1]['x']}", points, 'null'],
    ['{.a}', { a: 1.5e-7 }, '1.5e-07'],
    ['{.a}', { a: 12345678901 }, '12345678901'],
    ['{.a}', { a: '<b>' }, '<b>'],
    ['{.a}', { a: ['<b>'] }, '["\\u003cb\\u003e"]'],
  ];
  for (const [template, data, want] of cases) assert.equal(run(template, data), want, template);
});

void test('nested ranges unroll per item, empty ranges print nothing', () => {
  const data = {
    items: [
      { metadata: { name: 'pod1' }, spec: { containers: [{ name: 'foo' }, { name: 'bar' }] } },
      { metadata: { name: 'pod2' }, spec: { containers: [{ name: 'baz' }] } },
    ],
  };
  assert.equal(
    run(
      '{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}',
      data,
    ),
    'pod1:foo,bar,+pod2:baz,+',
  );
  assert.equal(
    run(
      '{range .items[*]}{.metadata.name}{"\\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\\n"}{end}',
      data,
    ),
    'pod1\tfoo bar \tfoo bar \npod2\tbaz \tbaz \n',
  );
  assert.equal(
    run('{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{end}{end}', { items: [] }),
    '',
  );
});

void test('conditions: the filter an on-call engineer types', () => {
  const task = {
    phase: 'Healthy',
    conditions: [
      { type: 'Ready', status: 'True' },
      { type: 'Stalled', status: 'False' },
    ],
  };
  assert.equal(run('{.conditions[?(@.type=="Ready")].status}', task), 'True');
  assert.equal(run("{.conditions[?(@.type=='Stalled')].status}", task), 'False');
  assert.equal(run('{.conditions[?(@.type == "Ready")].status}', task), 'True');
  assert.equal(
    run('{range .conditions[*]}{.type}={.status}{"\\n"}{end}', task),
    'Ready=True\nStalled=False\n',
  );
});

void test('jsonpath-as-json prints each result list as an indented JSON array', () => {
  assert.equal(run('{.items[*].metadata.name}', nodes, true), '[\n    "127.0.0.1",\n    "127.0.0.2"\n]\n');
  assert.equal(run('{.kind}', nodes, true), '[\n    "List"\n]\n');
  assert.equal(run('{.nosuch}', nodes, true), '[]\n');
});

void test('invalid templates are refused at parse time with a message', () => {
  const cases: [string, RegExp][] = [
    ['{.a', /unclosed action/],
    ['{.a[}', /unterminated array/],
    ['{.a[x]}', /invalid array index x/],
    ['{.a[?(@.b=="c"}', /unterminated filter/],
    ['{.a[?(@.b<>1)]}', /unrecognized filter operator <>/],
    ['{"abc}', /unterminated quoted string/],
    ['{"\\q"}', /unquote string/],
    ['{hello}', /unrecognized identifier hello/],
    ['{range .items[*]}{.a}{end}{end}', /not in range, nothing to end/],
    ['{range .items[*]}{.a}', /\{range\} without \{end\}/],
    ['{.a %}', /unrecognized character in action: U\+0025 '%'/],
    ['{.....a}', /invalid multiple recursive descent/],
    ['{1.2.3}', /cannot parse number 1\.2\.3/],
    [
      '{.a[?(@.b[?(@.c[?(@.d[?(@.e[?(@.f[?(@.g[?(@.h[?(@.i[?(@.j[?(@.k[?(@.l[?(@.m[?(@.n[?(@.o[?(@.p[?(@.q[?(@.r)])])])])])])])])])])])])])])])])]}',
      /nested too deeply|unterminated/,
    ],
    [`{.${'a'.repeat(MAX_TEMPLATE_LENGTH)}}`, /longer than/],
  ];
  for (const [template, message] of cases)
    assert.throws(
      () => parseJsonPath(template),
      (e: unknown) => e instanceof JsonPathParseError && message.test(e.message),
      template,
    );
});

void test('errors on the document are evaluation errors, as kubectl reports them', () => {
  const cases: [string, unknown, RegExp][] = [
    ['{.items[0]}', { items: [] }, /array index out of bounds: index 0, length 0/],
    ['{.items[3]}', { items: [1] }, /array index out of bounds: index 3, length 1/],
    ['{.a[0]}', { a: { b: 1 } }, /object is not array or slice/],
    ['{.a[?(@.x)]}', { a: 'str' }, /cannot be filtered/],
    ['{[?(@.x<0)].id}', points, /invalid type for comparison/],
    ['{[?(@.id<0)].id}', points, /incompatible types for comparison/],
    ['{[::0]}', [1], /step must be > 0/],
  ];
  for (const [template, data, message] of cases)
    assert.throws(
      () => run(template, data),
      (e: unknown) => e instanceof JsonPathEvalError && message.test(e.message),
      template,
    );
});

void test('evaluation is bounded: a union chain cannot blow up', () => {
  const wide = `{${'[0,0,0,0,0,0,0,0,0,0]'.repeat(8)}}`;
  const nested = [[[[[[[[[1]]]]]]]]];
  assert.throws(() => run(wide, nested), /more than 1000000 values/);
});

void test('property: {.k} prints every string and integer value of k as written', () => {
  let seed = 7;
  const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 500; i++) {
    const s = Array.from({ length: Math.floor(rand() * 12) }, () =>
      String.fromCharCode(32 + Math.floor(rand() * 95)),
    ).join('');
    assert.equal(run('{.k}', { k: s }), s);
    assert.equal(run('{.k}', { k: [s] }), goJson([s]));
    const n = Math.floor((rand() - 0.5) * 1e12);
    assert.equal(run('{.k}', { k: n }), String(n));
    assert.deepEqual(
      JSON.parse(goJson({ k: s, n })) as unknown,
      JSON.parse(JSON.stringify({ k: s, n })) as unknown,
    );
  }
});
