import { describe, expect, it } from 'vitest';
import { ACTION_SETS, POLICY_TEMPLATE, s3ObjectArn, tablesTableArn, tablesWarehouseArn, validatePolicy } from '../src/admin';

describe('policy validation', () => {
  it('accepts a well-formed document and the template', () => {
    expect(validatePolicy(POLICY_TEMPLATE)).toEqual({ ok: true, errors: [] });
    const single = JSON.stringify({
      Version: '2012-10-17',
      Statement: { Sid: 'one', Effect: 'Deny', NotAction: 's3:DeleteObject', Resource: '*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } },
    });
    expect(validatePolicy(single).ok).toBe(true);
  });

  it('refuses text that is not JSON', () => {
    const r = validatePolicy('{"Statement": [');
    expect(r.ok).toBe(false);
    expect(r.errors[0]).toMatch(/^not JSON/);
    expect(validatePolicy('[1]').errors).toEqual(['the document must be a JSON object']);
  });

  it('requires a Statement', () => {
    expect(validatePolicy('{"Version":"2012-10-17"}').errors).toEqual(['Statement: missing (an array of statements)']);
    expect(validatePolicy('{"Statement":[]}').errors).toEqual(['Statement: must not be empty']);
  });

  it('names each problem of each statement', () => {
    const doc = {
      Version: '2012-10-17',
      Statement: [
        { Effect: 'allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/*' },
        { Effect: 'Allow', Resource: '*' },
        { Effect: 'Deny', Action: [], NotAction: 'x', Resource: ['*'] },
        { Effect: 'Allow', Action: ['s3:GetObject', 3], Resource: '*', Principal: '*', Extra: 1 },
        'nope',
      ],
    };
    expect(validatePolicy(JSON.stringify(doc)).errors).toEqual([
      'Statement[0].Effect: must be "Allow" or "Deny"',
      'Statement[1].Action: missing',
      'Statement[2]: give Action or NotAction, not both',
      'Statement[3].Action: must be a string or a non-empty array of strings',
      'Statement[3].Principal: not allowed in an identity policy',
      'Statement[3].Extra: unknown field',
      'Statement[4]: must be an object',
    ]);
  });

  it('checks the Version', () => {
    expect(validatePolicy('{"Version":"2020-01-01","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}').errors).toEqual([
      'Version: must be "2012-10-17" (or "2008-10-17")',
    ]);
  });
});

describe('resources for simulation', () => {
  it('builds the server ARNs', () => {
    expect(s3ObjectArn('b', 'dir/k')).toBe('arn:aws:s3:::b/dir/k');
    expect(tablesWarehouseArn('wh')).toBe('arn:aws:s3tables:::bucket/wh');
    expect(tablesTableArn('wh', 'uuid-1')).toBe('arn:aws:s3tables:::bucket/wh/table/uuid-1');
  });

  it('offers action sets that stay under the server limit of 64 per simulation', () => {
    for (const set of Object.values(ACTION_SETS)) {
      expect(set.length).toBeGreaterThan(0);
      expect(set.length).toBeLessThanOrEqual(64);
      for (const a of set) expect(a).toMatch(/^(s3|s3tables):[A-Za-z]+$/);
    }
    expect(ACTION_SETS.object).toContain('s3:GetObject');
    expect(ACTION_SETS.table).toContain('s3tables:GetTable');
  });
});
