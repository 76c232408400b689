// The admin (IAM) API through the console's proxy (api/admin/v1/...), policy document checks
// before saving, and the resources and action sets offered by "What may this user do?".

import { apiFetch, apiJson } from './api';

const enc = encodeURIComponent;
const BASE = 'admin/v1';

export interface User {
  name: string;
  enabled: boolean;
  'created-ms': number;
  policies: string[];
}

export interface AccessKey {
  'access-key': string;
  user: string;
  enabled: boolean;
  'created-ms': number;
  description: string;
  'secret-key'?: string; // only in the answer to a create
}

export interface PolicySummary {
  name: string;
  builtin: boolean;
}

export interface PolicyDetail extends PolicySummary {
  document: unknown;
}

export const listUsers = async () => (await apiJson<{ users: User[] }>(`${BASE}/users`)).users ?? [];
export const createUser = (name: string, policies: string[]) =>
  apiJson<User>(`${BASE}/users`, { method: 'POST', json: { name, policies } });
export const setUserEnabled = (name: string, enabled: boolean) =>
  apiJson<User>(`${BASE}/users/${enc(name)}`, { method: 'PATCH', json: { enabled } });
export const deleteUser = async (name: string) => {
  await apiFetch(`${BASE}/users/${enc(name)}`, { method: 'DELETE' });
};

export const listAccessKeys = async (user?: string) =>
  (await apiJson<{ 'access-keys': AccessKey[] }>(user ? `${BASE}/users/${enc(user)}/access-keys` : `${BASE}/access-keys`))[
    'access-keys'
  ] ?? [];
export const createAccessKey = (user: string, description: string) =>
  apiJson<AccessKey>(`${BASE}/users/${enc(user)}/access-keys`, {
    method: 'POST',
    json: description ? { description } : {},
  });
export const setAccessKeyEnabled = async (key: string, enabled: boolean) => {
  await apiFetch(`${BASE}/access-keys/${enc(key)}`, { method: 'PATCH', json: { enabled } });
};
export const deleteAccessKey = async (key: string) => {
  await apiFetch(`${BASE}/access-keys/${enc(key)}`, { method: 'DELETE' });
};

export const listPolicies = async () =>
  (await apiJson<{ policies: PolicySummary[] }>(`${BASE}/policies`)).policies ?? [];
export const getPolicy = (name: string) => apiJson<PolicyDetail>(`${BASE}/policies/${enc(name)}`);
export const putPolicy = async (name: string, documentText: string) => {
  await apiFetch(`${BASE}/policies/${enc(name)}`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body: documentText,
  });
};
export const deletePolicy = async (name: string) => {
  await apiFetch(`${BASE}/policies/${enc(name)}`, { method: 'DELETE' });
};
export const attachPolicy = async (user: string, policy: string) => {
  await apiFetch(`${BASE}/users/${enc(user)}/policies/${enc(policy)}`, { method: 'PUT' });
};
export const detachPolicy = async (user: string, policy: string) => {
  await apiFetch(`${BASE}/users/${enc(user)}/policies/${enc(policy)}`, { method: 'DELETE' });
};

export interface SimulationResult {
  action: string;
  allowed: boolean;
  reason: 'allowed' | 'implicit-deny' | 'explicit-deny';
}

export const simulate = async (user: string, resource: string, actions: string[]) =>
  (
    await apiJson<{ results: SimulationResult[] }>(`${BASE}/users/${enc(user)}/simulate`, {
      method: 'POST',
      json: { resource, actions },
    })
  ).results ?? [];

// ---- policy documents ----

export interface PolicyCheck {
  ok: boolean;
  errors: string[];
}

const STATEMENT_FIELDS = ['Sid', 'Effect', 'Action', 'NotAction', 'Resource', 'NotResource', 'Condition'];

function isStringOrStrings(value: unknown): boolean {
  if (typeof value === 'string') return value.length > 0;
  return Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string' && v.length > 0);
}

// Checks a policy document before it is sent: it parses as JSON, has a Statement (an array, or
// one object as AWS also takes), and each statement has Effect Allow or Deny, exactly one of
// Action/NotAction and of Resource/NotResource. The server checks the rest (conditions, ARNs).
export function validatePolicy(text: string): PolicyCheck {
  const errors: string[] = [];
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    return { ok: false, errors: [`not JSON: ${error instanceof Error ? error.message : String(error)}`] };
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    return { ok: false, errors: ['the document must be a JSON object'] };
  }
  const record = doc as Record<string, unknown>;
  if ('Version' in record && record.Version !== '2012-10-17' && record.Version !== '2008-10-17') {
    errors.push('Version: must be "2012-10-17" (or "2008-10-17")');
  }
  if ('Principal' in record || 'NotPrincipal' in record) errors.push('Principal: not allowed in an identity policy');
  const statement = record.Statement;
  let statements: unknown[];
  if (Array.isArray(statement)) {
    statements = statement;
    if (statements.length === 0) errors.push('Statement: must not be empty');
  } else if (typeof statement === 'object' && statement !== null) {
    statements = [statement];
  } else {
    errors.push('Statement: missing (an array of statements)');
    statements = [];
  }
  statements.forEach((raw, i) => {
    const where = `Statement[${i}]`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      errors.push(`${where}: must be an object`);
      return;
    }
    const s = raw as Record<string, unknown>;
    if (s.Effect !== 'Allow' && s.Effect !== 'Deny') errors.push(`${where}.Effect: must be "Allow" or "Deny"`);
    const pairs: Array<[string, string]> = [
      ['Action', 'NotAction'],
      ['Resource', 'NotResource'],
    ];
    for (const [field, negated] of pairs) {
      const has = field in s;
      const hasNot = negated in s;
      if (has && hasNot) errors.push(`${where}: give ${field} or ${negated}, not both`);
      else if (!has && !hasNot) errors.push(`${where}.${field}: missing`);
      else {
        const name = has ? field : negated;
        if (!isStringOrStrings(s[name])) errors.push(`${where}.${name}: must be a string or a non-empty array of strings`);
      }
    }
    if ('Condition' in s && (typeof s.Condition !== 'object' || s.Condition === null || Array.isArray(s.Condition))) {
      errors.push(`${where}.Condition: must be an object`);
    }
    if ('Principal' in s || 'NotPrincipal' in s) errors.push(`${where}.Principal: not allowed in an identity policy`);
    for (const key of Object.keys(s)) {
      if (!STATEMENT_FIELDS.includes(key) && key !== 'Principal' && key !== 'NotPrincipal') {
        errors.push(`${where}.${key}: unknown field`);
      }
    }
  });
  return { ok: errors.length === 0, errors };
}

export const POLICY_TEMPLATE = `{
  "Version": "2012-10-17",
  "Statement": [
    {
      "Effect": "Allow",
      "Action": ["s3:GetObject", "s3:ListBucket"],
      "Resource": ["arn:aws:s3:::my-bucket", "arn:aws:s3:::my-bucket/*"]
    }
  ]
}`;

// ---- resources and actions for simulation (auth/policy.h) ----

export const s3BucketArn = (bucket: string) => `arn:aws:s3:::${bucket}`;
export const s3ObjectArn = (bucket: string, key: string) => `arn:aws:s3:::${bucket}/${key}`;
export const tablesWarehouseArn = (warehouse: string) => `arn:aws:s3tables:::bucket/${warehouse}`;
export const tablesTableArn = (warehouse: string, tableUuid: string) =>
  `${tablesWarehouseArn(warehouse)}/table/${tableUuid}`;
export const tablesViewArn = (warehouse: string, viewUuid: string) => `${tablesWarehouseArn(warehouse)}/view/${viewUuid}`;

export const ACTION_SETS: Record<'bucket' | 'object' | 'warehouse' | 'table' | 'view', string[]> = {
  bucket: [
    's3:ListBucket',
    's3:GetBucketLocation',
    's3:CreateBucket',
    's3:DeleteBucket',
    's3:ListBucketMultipartUploads',
    's3:GetBucketVersioning',
  ],
  object: [
    's3:GetObject',
    's3:PutObject',
    's3:DeleteObject',
    's3:GetObjectTagging',
    's3:PutObjectTagging',
    's3:DeleteObjectTagging',
    's3:AbortMultipartUpload',
    's3:ListMultipartUploadParts',
  ],
  warehouse: [
    's3tables:GetWarehouse',
    's3tables:GetConfig',
    's3tables:DeleteWarehouse',
    's3tables:ListNamespaces',
    's3tables:CreateNamespace',
    's3tables:CreateTable',
    's3tables:CreateView',
    's3tables:GetTableBucketMaintenanceConfiguration',
    's3tables:PutTableBucketMaintenanceConfiguration',
  ],
  table: [
    's3tables:GetTable',
    's3tables:UpdateTable',
    's3tables:DeleteTable',
    's3tables:RenameTable',
    's3tables:GetTableMaintenanceConfiguration',
    's3tables:PutTableMaintenanceConfiguration',
    's3tables:GetTableMaintenanceJobStatus',
    's3tables:StartTableMaintenanceJob',
  ],
  view: ['s3tables:GetView', 's3tables:UpdateView', 's3tables:DeleteView', 's3tables:RenameView'],
};
