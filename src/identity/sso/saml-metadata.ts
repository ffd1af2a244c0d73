const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';

/** What pitcrew needs of a SAML identity provider, read from the metadata XML an admin pastes. */
export interface IdpMetadata {
  entityId: string;
  /** The HTTP-Redirect SingleSignOnService location: where an AuthnRequest goes. */
  ssoUrl: string;
  /** The signing certificates, base64 DER as in the metadata (node-saml takes them so). */
  certificates: string[];
}

/** An element as xml2js gives it, prefixes stripped: attributes under `$`, children as arrays by name. */
interface Node { $?: Record<string, string>; _?: string; [child: string]: unknown }

/** The IdP's entity id, sign-in URL and signing certificates, or what is missing from the XML. */
export async function parseIdpMetadata(xml: string): Promise<IdpMetadata | { problem: string }> {
  // Loaded here, not at start (saml.ts says why).
  const { parseStringPromise, processors } = await import('xml2js');
  let root: Record<string, Node>;
  try {
    root = (await parseStringPromise(xml, { tagNameProcessors: [processors.stripPrefix], explicitRoot: true })) as Record<string, Node>;
  } catch (error) {
    return { problem: `the metadata is not well-formed XML (${error instanceof Error ? error.message.split('\n')[0] : 'unreadable'})` };
  }
  const descriptor = find(root, 'EntityDescriptor').find((entity) => children(entity, 'IDPSSODescriptor').length > 0);
  const idp = descriptor ? children(descriptor, 'IDPSSODescriptor')[0] : undefined;
  const entityId = descriptor?.$?.entityID;
  if (!descriptor || !idp || !entityId) return { problem: 'the metadata has no EntityDescriptor with an entityID and an IDPSSODescriptor: paste the identity provider\'s metadata' };
  const ssoUrl = children(idp, 'SingleSignOnService').find((service) => service.$?.Binding === REDIRECT_BINDING)?.$?.Location;
  if (!ssoUrl) return { problem: 'the metadata has no SingleSignOnService with the HTTP-Redirect binding' };
  const certificates = children(idp, 'KeyDescriptor')
    .filter((key) => (key.$?.use ?? 'signing') === 'signing')
    .flatMap((key) => find(key, 'X509Certificate'))
    .map((cert) => textOf(cert).replace(/\s+/g, ''))
    .filter((cert) => cert.length > 0);
  if (certificates.length === 0) return { problem: 'the metadata has no signing certificate (a KeyDescriptor use="signing" with an X509Certificate)' };
  return { entityId, ssoUrl, certificates };
}

function children(node: Node, name: string): Node[] {
  const value = node[name];
  return Array.isArray(value) ? value.map((child) => (typeof child === 'string' ? { _: child } : child as Node)) : [];
}

/** Every element so named at any depth below `node` (metadata may wrap entities in EntitiesDescriptor). */
function find(node: Node | Record<string, Node>, name: string): Node[] {
  return Object.entries(node).flatMap(([key, value]) => {
    if (key === '$' || key === '_') return [];
    const list = (Array.isArray(value) ? value : [value]).filter((child): child is Node | string => typeof child === 'object' || typeof child === 'string');
    return list.flatMap((child) => {
      const element: Node = typeof child === 'string' ? { _: child } : child;
      return key === name ? [element, ...find(element, name)] : find(element, name);
    });
  });
}

function textOf(node: Node): string {
  return typeof node._ === 'string' ? node._ : '';
}
