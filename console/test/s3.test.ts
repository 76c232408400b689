// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import {
  buildCompleteMultipart,
  buildTagging,
  encodeKey,
  objectPath,
  parseInitiateMultipart,
  parseListBuckets,
  parseListObjects,
  parseTagging,
  planUpload,
  PARTS_PER_UPLOAD_MAX,
} from '../src/s3';
import { parseS3Error } from '../src/xml';
import { errorFromBody } from '../src/api';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

const LIST_V2 = `<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>photos</Name>
  <Prefix>2024/</Prefix>
  <KeyCount>3</KeyCount>
  <MaxKeys>200</MaxKeys>
  <Delimiter>/</Delimiter>
  <IsTruncated>true</IsTruncated>
  <Contents>
    <Key>2024/a &amp; b.jpg</Key>
    <LastModified>2024-05-01T12:00:00.000Z</LastModified>
    <ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag>
    <Size>1048576</Size>
    <StorageClass>STANDARD</StorageClass>
  </Contents>
  <Contents>
    <Key>2024/&lt;img src=x onerror=alert(1)&gt;</Key>
    <LastModified>2024-05-02T12:00:00.000Z</LastModified>
    <ETag>"abc-2"</ETag>
    <Size>0</Size>
  </Contents>
  <CommonPrefixes><Prefix>2024/january/</Prefix></CommonPrefixes>
  <CommonPrefixes><Prefix>2024/february/</Prefix></CommonPrefixes>
  <NextContinuationToken>token+/=1</NextContinuationToken>
</ListBucketResult>`;

describe('S3 XML', () => {
  it('reads a ListObjectsV2 page: objects, folders and the continuation token', () => {
    const page = parseListObjects(LIST_V2);
    expect(page.prefix).toBe('2024/');
    expect(page.objects).toEqual([
      { key: '2024/a & b.jpg', size: 1048576, lastModified: '2024-05-01T12:00:00.000Z', etag: '"9b2cf535f27731c974343645a3985328"' },
      { key: '2024/<img src=x onerror=alert(1)>', size: 0, lastModified: '2024-05-02T12:00:00.000Z', etag: '"abc-2"' },
    ]);
    expect(page.prefixes).toEqual(['2024/january/', '2024/february/']);
    expect(page.isTruncated).toBe(true);
    expect(page.nextToken).toBe('token+/=1');
  });

  it('has no next token on the last page', () => {
    const page = parseListObjects(
      '<ListBucketResult><Prefix></Prefix><IsTruncated>false</IsTruncated><Contents><Key>k</Key><Size>5</Size></Contents></ListBucketResult>',
    );
    expect(page.isTruncated).toBe(false);
    expect(page.nextToken).toBeNull();
    expect(page.objects.map((o) => o.key)).toEqual(['k']);
  });

  it('refuses a document of another kind', () => {
    expect(() => parseListObjects('<Error><Code>AccessDenied</Code></Error>')).toThrow();
    expect(() => parseListObjects('not xml at all <<<')).toThrow();
  });

  it('reads ListBuckets', () => {
    const buckets = parseListBuckets(`<?xml version="1.0"?>
      <ListAllMyBucketsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
        <Owner><ID>root</ID></Owner>
        <Buckets>
          <Bucket><Name>alpha</Name><CreationDate>2024-01-01T00:00:00.000Z</CreationDate></Bucket>
          <Bucket><Name>beta</Name><CreationDate>2024-02-01T00:00:00.000Z</CreationDate></Bucket>
        </Buckets>
      </ListAllMyBucketsResult>`);
    expect(buckets).toEqual([
      { name: 'alpha', creationDate: '2024-01-01T00:00:00.000Z' },
      { name: 'beta', creationDate: '2024-02-01T00:00:00.000Z' },
    ]);
    expect(parseListBuckets('<ListAllMyBucketsResult><Buckets/></ListAllMyBucketsResult>')).toEqual([]);
  });

  it('reads S3 errors and turns them into messages', () => {
    const xml = '<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Access Denied.</Message><Resource>/b/k</Resource></Error>';
    expect(parseS3Error(xml)).toEqual({ code: 'AccessDenied', message: 'Access Denied.' });
    expect(parseS3Error('{"error":{}}')).toBeNull();
    const err = errorFromBody(403, 'Forbidden', 'application/xml', xml);
    expect(err.message).toBe('Access Denied.');
    expect(err.code).toBe('AccessDenied');
    expect(err.status).toBe(403);
  });

  it('reads the JSON error forms: console/admin, and Iceberg with a numeric code', () => {
    const admin = errorFromBody(403, '', 'application/json', '{"error":{"code":"AccessDenied","message":"not allowed: admin:ListUsers"}}');
    expect([admin.code, admin.message]).toEqual(['AccessDenied', 'not allowed: admin:ListUsers']);
    const iceberg = errorFromBody(
      404,
      '',
      'application/json',
      '{"error":{"message":"Table does not exist: ns.t","type":"NoSuchTableException","code":404}}',
    );
    expect([iceberg.code, iceberg.message]).toEqual(['NoSuchTableException', 'Table does not exist: ns.t']);
    const slow = errorFromBody(429, '', 'application/json', '{"error":{"code":"SlowDown","message":"too many"}}', '17');
    expect(slow.retryAfterSeconds).toBe(17);
    expect(errorFromBody(502, 'Bad Gateway', 'text/html', '<html><body>x</body></html>').message).toBe('502 Bad Gateway');
    expect(errorFromBody(500, '', 'text/plain', 'plain words').message).toBe('plain words');
  });

  it('reads and writes tagging documents, escaping markup', () => {
    const tags = [
      { key: 'team', value: 'data & ml' },
      { key: '<b>', value: '"quoted"' },
    ];
    const xml = buildTagging(tags);
    expect(xml).toContain('<Key>&lt;b&gt;</Key>');
    expect(xml).not.toContain('<b>');
    expect(parseTagging(xml)).toEqual(tags);
    expect(parseTagging('<Tagging><TagSet/></Tagging>')).toEqual([]);
  });

  it('builds CompleteMultipartUpload with parts in order', () => {
    const xml = buildCompleteMultipart([
      { partNumber: 2, etag: '"b"' },
      { partNumber: 1, etag: '"a"' },
    ]);
    expect(xml).toContain(
      '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>&quot;a&quot;</ETag></Part><Part><PartNumber>2</PartNumber>',
    );
    expect(parseInitiateMultipart('<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key><UploadId>u-1</UploadId></InitiateMultipartUploadResult>')).toBe('u-1');
    expect(() => parseInitiateMultipart('<InitiateMultipartUploadResult/>')).toThrow();
  });
});

describe('multipart planning', () => {
  it('sends up to 8 MiB in one PUT', () => {
    expect(planUpload(0)).toEqual({ multipart: false, partBytes: 0, parts: [{ number: 1, start: 0, end: 0 }] });
    const p = planUpload(8 * MiB);
    expect(p.multipart).toBe(false);
    expect(p.parts).toHaveLength(1);
  });

  it('splits larger files into 8 MiB parts with a short last part', () => {
    const size = 8 * MiB + 1;
    const p = planUpload(size);
    expect(p.multipart).toBe(true);
    expect(p.partBytes).toBe(8 * MiB);
    expect(p.parts).toEqual([
      { number: 1, start: 0, end: 8 * MiB },
      { number: 2, start: 8 * MiB, end: size },
    ]);
    const q = planUpload(100 * MiB);
    expect(q.parts).toHaveLength(13);
    expect(q.parts[12].end - q.parts[12].start).toBe(4 * MiB);
    // the parts cover the file exactly, without gaps or overlaps
    for (let i = 1; i < q.parts.length; i++) expect(q.parts[i].start).toBe(q.parts[i - 1].end);
    expect(q.parts[q.parts.length - 1].end).toBe(100 * MiB);
  });

  it('grows the part size so no file needs more than 10,000 parts', () => {
    const exact = planUpload(PARTS_PER_UPLOAD_MAX * 8 * MiB);
    expect(exact.parts).toHaveLength(10000);
    expect(exact.partBytes).toBe(8 * MiB);
    const over = planUpload(PARTS_PER_UPLOAD_MAX * 8 * MiB + 1);
    expect(over.partBytes).toBe(9 * MiB);
    expect(over.parts.length).toBeLessThanOrEqual(10000);
    const big = planUpload(1024 * GiB);
    expect(big.parts.length).toBeLessThanOrEqual(10000);
    expect(big.partBytes % MiB).toBe(0);
    expect(big.parts[big.parts.length - 1].end).toBe(1024 * GiB);
  });

  it('refuses files larger than an object may be', () => {
    expect(() => planUpload(5 * 1024 * GiB + 1)).toThrow(/5 TiB/);
    expect(() => planUpload(-1)).toThrow();
  });
});

describe('key encoding', () => {
  it('percent-encodes each segment and keeps the slashes', () => {
    expect(encodeKey('a b/c+d/e%f')).toBe('a%20b/c%2Bd/e%25f');
    expect(encodeKey('photos/été/日本.jpg')).toBe('photos/%C3%A9t%C3%A9/%E6%97%A5%E6%9C%AC.jpg');
    expect(encodeKey('<img src=x onerror=alert(1)>')).toBe('%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E');
    expect(encodeKey("it's!*")).toBe('it%27s%21%2A');
    expect(encodeKey('dir//x/')).toBe('dir//x/');
    expect(encodeKey('a?b#c')).toBe('a%3Fb%23c');
  });

  it('encodes the slashes too when a segment is a dot segment the browser would remove', () => {
    expect(encodeKey('a/../b')).toBe('a%2F..%2Fb');
    expect(encodeKey('./x')).toBe('.%2Fx');
    expect(encodeKey('a.b/c..d')).toBe('a.b/c..d');
  });

  it('builds path-style object paths', () => {
    expect(objectPath('my-bucket', 'x y/z')).toBe('s3/my-bucket/x%20y/z');
  });

  it('round-trips through decoding', () => {
    for (const key of ['a b/c+d', 'x/%41/y', 'ü/ß/😀', 'q?r#s&t=u', '<img src=x onerror=alert(1)>']) {
      expect(encodeKey(key).split('/').map(decodeURIComponent).join('/')).toBe(key);
    }
  });
});
