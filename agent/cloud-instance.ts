import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** An EC2 instance id, as EC2 writes it into the SMBIOS asset tag of a Nitro instance. */
const EC2_INSTANCE = /^i-(?:[0-9a-f]{8}|[0-9a-f]{17})$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * This machine's instance id at its cloud, read from its firmware tables (no network call): EC2
 * Nitro instances carry their id as the board's asset tag; a Nova server (libvirt) names itself
 * "OpenStack Nova" and its SMBIOS UUID is the server's id, readable by root only. Undefined
 * elsewhere, or when it cannot be read: `--cloud-instance-id` says it, or the API sets it.
 */
export function detectCloudInstance(dmi = '/sys/class/dmi/id'): string | undefined {
  const asset = read(join(dmi, 'board_asset_tag'));
  if (asset && EC2_INSTANCE.test(asset)) return asset;
  if (read(join(dmi, 'product_name')) === 'OpenStack Nova') {
    const uuid = read(join(dmi, 'product_uuid'))?.toLowerCase();
    if (uuid && UUID.test(uuid)) return uuid;
  }
  return undefined;
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}
