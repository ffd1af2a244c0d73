import mediaType from '../../../src/integrations/zabbix/media-type.yaml?raw';

/** pitcrew's Zabbix webhook media type (src/integrations/zabbix/media-type.yaml), to download and import. */
export function ZabbixMediaType() {
  const href = `data:application/yaml;charset=utf-8,${encodeURIComponent(mediaType)}`;
  return (
    <a className="button" href={href} download="pitcrew-media-type.yaml">
      Download the media type
    </a>
  );
}
