import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { detectCloudInstance } from './cloud-instance.js';

// The files a Linux kernel shows in /sys/class/dmi/id, as EC2 (Nitro) and Nova's libvirt driver fill them.
const dirs: string[] = [];
function dmi(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'pitcrew-dmi-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), `${text}\n`);
  return dir;
}
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe('the instance id an agent reports', () => {
  it('reads an EC2 instance id from the board asset tag', () => {
    expect(detectCloudInstance(dmi({ board_asset_tag: 'i-0123456789abcdef0', product_name: 't3.micro', sys_vendor: 'Amazon EC2' }))).toBe('i-0123456789abcdef0');
  });

  it('reads a Nova server id from the SMBIOS UUID of an OpenStack Nova machine', () => {
    expect(detectCloudInstance(dmi({ product_name: 'OpenStack Nova', product_uuid: '6F1B2C3D-4E5F-4A6B-8C7D-9E0F1A2B3C4D', board_asset_tag: '' }))).toBe('6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d');
  });

  it('says nothing elsewhere, or when it cannot read', () => {
    expect(detectCloudInstance(dmi({ board_asset_tag: 'Default string', product_name: 'Standard PC (Q35 + ICH9, 2009)', product_uuid: '6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d' }))).toBeUndefined();
    expect(detectCloudInstance(dmi({ product_name: 'OpenStack Nova' }))).toBeUndefined();
    expect(detectCloudInstance('/nonexistent/dmi')).toBeUndefined();
  });
});
