import { describe, expect, it } from 'vitest';
import { STARTER_RUNBOOKS } from '../runbooks/library/catalogue.js';
import { alarmKind, nameWords, starterFor, type AlarmKind } from './alarm-kind.js';

describe('alarmKind: what an alarm is about, from its name', () => {
  it('splits names into words at case changes and punctuation', () => {
    expect(nameWords('NodeFilesystemSpaceFillingUp')).toEqual(['node', 'filesystem', 'space', 'filling', 'up']);
    expect(nameWords('HTTPServerDown')).toEqual(['http', 'server', 'down']);
    expect(nameWords('disk_full:/var')).toEqual(['disk', 'full', 'var']);
  });

  // Alert names as the tools' own rule sets spell them (Prometheus node-exporter and kube-prometheus mixins, Zabbix templates, Datadog monitors).
  it.each<[string, AlarmKind]>([
    ['DiskFull', 'disk'],
    ['disk_full', 'disk'],
    ['NodeFilesystemSpaceFillingUp', 'disk'],
    ['HostOutOfDiskSpace', 'disk'],
    ['KubePersistentVolumeFillingUp', 'disk'],
    ['Free inodes is less than 20%', 'disk'],
    ['HostOutOfMemory', 'memory'],
    ['High memory utilization', 'memory'],
    ['ContainerOOMKilled', 'memory'],
    ['JvmHeapUsageHigh', 'memory'],
    ['High swap space usage', 'memory'], // swap before space: memory words are tried before disk ones
    ['InstanceDown', 'service_down'],
    ['TargetDown', 'service_down'],
    ['nginx not running', 'service_down'],
    ['KubePodCrashLooping', 'service_down'],
    ['ServiceUnavailable', 'service_down'],
    ['SystemdUnitFailed', 'service_down'],
    ['Zabbix agent is not responding', 'service_down'],
    ['SSLCertExpiringSoon', 'certificate'],
    ['ProbeSslCertificateExpiry', 'certificate'],
    ['TLS certificate will expire', 'certificate'],
    ['X509CertificateExpiring', 'certificate'],
    ['HighCpuLoad', 'other'],
    ['LoginFailuresSpike', 'other'],
    ['BackupFailed', 'other'],
  ])('%s is %s', (name, kind) => {
    expect(alarmKind(name)).toBe(kind);
  });
});

describe('starterFor', () => {
  it('suggests a starter runbook of the library for each kind but other, with the flavour to run it in', () => {
    expect(starterFor('disk')).toMatchObject({ slug: 'disk-cleanup', flavour: 'autofix' });
    expect(starterFor('memory')).toMatchObject({ slug: 'top-memory', flavour: 'diagnostics' });
    expect(starterFor('service_down')).toMatchObject({ slug: 'restart-service', flavour: 'autofix' });
    expect(starterFor('certificate')).toMatchObject({ slug: 'cert-expiry', flavour: 'diagnostics' });
    expect(starterFor('other')).toBeNull();
    for (const kind of ['disk', 'memory', 'service_down', 'certificate'] as const) {
      const suggestion = starterFor(kind)!;
      expect(suggestion.name).toBe(STARTER_RUNBOOKS.find((r) => r.slug === suggestion.slug)!.name);
    }
  });
});
