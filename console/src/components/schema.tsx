// A schema as an indented tree of fields with their ids, types, required flags and docs.

import { flattenSchema, typeToString, type StructType } from '../catalog';

export function SchemaTree({ schema, testid = 'schema-tree' }: { schema: StructType; testid?: string }) {
  const rows = flattenSchema(schema);
  return (
    <table class="list schema" data-testid={testid}>
      <thead>
        <tr>
          <th>Field</th>
          <th>Type</th>
          <th class="num">Id</th>
          <th>Required</th>
          <th>Doc</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.path} data-testid="schema-row" data-depth={r.depth}>
            <td>
              <span class="indent" style={{ paddingLeft: `${r.depth * 1.25}rem` }}>
                {r.depth > 0 && <span class="tree-mark">└ </span>}
                {r.name}
              </span>
            </td>
            <td>
              <code>{r.type}</code>
            </td>
            <td class="num">{r.id}</td>
            <td>{r.required ? 'required' : 'optional'}</td>
            <td>{r.doc}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function SchemaLine({ schema }: { schema: StructType }) {
  return <code class="break">{typeToString(schema)}</code>;
}
