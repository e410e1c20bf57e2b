// The default plural of a kind: the resource name controller-gen (kubebuilder) writes into a CRD for the same kind.

/*
 * controller-gen names a CRD's plural `lowercase(flect.Pluralize(kind))` (gobuffalo/flect v1.0.3).
 * The tables below give the same answers for every kind (checked word for word against flect in
 * test/crd/plural.test.ts); the one place we differ on purpose is a lower-case acronym ending in S
 * (`Dns`), where flect's suffix replacement misses and answers `dnsdnses`: we answer `dnses`.
 *
 * The algorithm, in flect's order:
 *   1. the kind as written is a known word (`ID`) or plural (`IDs`);
 *   2. its last word (CamelCase, a known acronym closes a run of capitals) lower-cased is a known plural
 *      (`Data`, `Indexes`): unchanged; a known singular (`Person`, `Axis`): its plural;
 *   3. the first suffix rule in priority order whose plural or singular ends the last word: a plural
 *      ending leaves the kind as it is, a singular ending is replaced (`Policy` → `Policies`, `Box` → `Boxes`);
 *   4. a last word ending in `s` is left as it is (`Endpoints`); anything else gets an `s`.
 */

/** Irregular words and suffixes, most specific first: `singular:plural`, or one word whose plural is itself. */
const RULES_TEXT = `
graffiti shoe:shoes formula:formulas agenda:agendas pretorium:pretoriums cookie:cookies movie:movies move:moves hive:hives chive:chives
thief:thieves hoof:hoofs dwarf:dwarfs rice news money jeans information equipment tomato:tomatoes potato:potatoes buffalo:buffaloes
topaz:topazes ache:aches pause:pauses muse:muses misuse:misuses house:houses fuse:fuses excuse:excuses cruse:cruses clause:clauses
cause:causes abuse:abuses vedalia:vedalias basis:bases base:bases testis:testes thesis:theses oasis:oases genesis:geneses
ellipsis:ellipses crisis:crises helix:helices radix:radices appendix:appendices vortex:vortices vertex:vertices latex:latices
index:indices codex:codices apex:apices uva:uvae praecava:praecavae postcava:postcavae larva:larvae vita:vitae minutia:minutiae
differentia:differentiae vertebra:vertebrae alumna:alumnae genus:genera corpus:corpora syllabus:syllabi radius:radii
octopus:octupuses nucleus:nuclei locus:loci focus:foci coccus:cocci cactus:cacti bacillus:bacilli alumnus:alumni quota:quotas
curriculum:curriculums symposium:symposia auditorium:auditoria aquarium:aquaria stadium:stadiums medium:media media taxon:taxa
phenomenon:phenomena noumenon:noumena mitochondrion:mitochondria lexicon:lexica ganglion:ganglia criterion:criteria
bureau:bureaus fabliau:fabliaux adieu:adieux person:people woman:women tooth:teeth mouse:mice human:humans man:men goose:geese
foot:feet child:children you tuna trout swine species shrimp sheep series salmon police moose fish deer chassis blues bison beef
aircraft
|
tive:tives eaf:eaves oaf:oaves afe:aves arf:arves rfe:rves rf:rves lf:lves fe:ves ay:ays ey:eys oy:oys quy:quies uy:uys y:ies
eau:eaux bula:bulae dula:bulae lula:bulae nula:bulae vula:bulae hedron:hedra ium:ia seum:seums eum:ea oum:oa stracum:straca dum:da
elum:ela ilum:ila olum:ola ulum:ula llum:lla ylum:yla imum:ima ernum:erna gnum:gna brum:bra crum:cra terum:tera serum:sera
trum:tra antum:anta atum:ata entum:enta etum:eta itum:ita otum:ota utum:uta ctum:cta ovum:ova trix:trices iasis:iases mesis:meses
kinesis:kineses resis:reses gnosis:gnoses opsis:opses ysis:yses ouse:ouses lause:lauses us:uses ch:ches io:ios sh:shes ss:sses
ez:ezzes iz:izzes tz:tzes zz:zzes ano:anos lo:los to:tos oo:oos o:oes x:xes S:Ses
`;

/** Whole words only (never a suffix): `Ox` → `Oxen` but `Box` → `Boxes`. */
const WHOLE_WORDS_TEXT = 'ox:oxen louse:lice die:dice axis:axes alias:aliases use:uses toe:toes';

/** Second plurals that are left as they are when a kind is one (`Indexes`, `Formulae`). */
const OTHER_PLURALS_TEXT = `
beefs fishes salmons shrimps swines trouts tunas adieus bureaux ganglions lexicons mitochondrions stadia aquariums auditoriums
symposiums curricula alumnuses cactuses focuses locuses nucleuses octopi radiuses corpuses apexes codexes indexes latexes vertexes
vortexes appendixes radixes helixes buffalos dwarves hooves formulae
`;

/** Words whose plural is not read back as a plural (`Blues`, `Ellipses` are pluralised by the suffix rules). */
const ONE_WAY = new Set(['blues', 'medium', 'ellipsis', 'basis']);

/** Acronyms: a run of capitals that spells one ends a word (`DNSAlias` is `DNS` + `Alias`). */
const ACRONYMS = new Set(
  `OK UTF8 HTML JSON JWT ID UUID SQL ACK ACL ADSL AES ANSI API ARP ATM BGP BSS CCITT CHAP CIDR CIR CLI CPE CPU CRC CRT CSMA CMOS DCE DEC
DES DHCP DNS DRAM DSL DSLAM DTE DMI EHA EIA EIGRP EOF ESS FCC FCS FDDI FTP GBIC GEPOF HDLC HTTP HTTPS IANA ICMP IDF IDS IEEE IETF IMAP IP
IPS ISDN ISP LACP LAN LAPB LAPF LLC MAC MC MDF MIB MPLS MTU NAC NAT NBMA NIC NRZ NRZI NVRAM OSI OSPF OUI PAP PAT PC PIM PCM PDU POP3
POTS PPP PPTP PTT PVST RAM RARP RFC RIP RLL ROM RSTP RTP RCP SDLC SFD SFP SLARP SLIP SMTP SNA SNAP SNMP SOF SRAM SSH SSID STP SYN TDM
TFTP TIA TOFU UDP URL URI USB UTP VC VLAN VLSM VPN W3C WAN WEP WPA WWW`.split(/\s+/),
);

function pairs(text: string): [string, string][] {
  return text.split(/\s+/).filter((w) => w !== '').map((w) => {
    const [singular, plural] = w.split(':');
    return [singular, plural ?? singular];
  });
}

const [IRREGULAR_TEXT, SUFFIX_TEXT] = RULES_TEXT.split('|');
const IRREGULAR = pairs(IRREGULAR_TEXT);
/** The suffix rules in priority order: the irregular words first (they also end compound words: `Salesperson`), then the general ones. */
const RULES = [...IRREGULAR, ...pairs(SUFFIX_TEXT)];
/** Known singular → plural, looked up on the whole last word. */
const WORDS = new Map<string, string>([...IRREGULAR, ...pairs(WHOLE_WORDS_TEXT), ['ID', 'IDs']]);
/** Known plurals, left as they are. */
const PLURALS = new Set<string>([
  ...IRREGULAR.filter(([singular]) => !ONE_WAY.has(singular)).map(([, plural]) => plural),
  ...pairs(WHOLE_WORDS_TEXT).map(([, plural]) => plural),
  ...pairs(OTHER_PLURALS_TEXT).map(([plural]) => plural),
  'IDs',
]);

const isUpper = (c: string): boolean => c >= 'A' && c <= 'Z';

/** The last word of a CamelCase kind, as flect splits it: `NetworkPolicy` → `Policy`, `DNSAlias` → `Alias`, `Dns` → `DNS`. */
function lastWord(kind: string): string {
  if (ACRONYMS.has(kind.toUpperCase())) return kind.toUpperCase();
  let start = 0;
  let prev = '';
  for (let i = 0; i < kind.length; i++) {
    const c = kind[i];
    if (isUpper(c) && (!isUpper(prev) || ACRONYMS.has(kind.slice(start, i).toUpperCase()))) start = i;
    prev = c;
  }
  return kind.slice(start);
}

/**
 * The plural resource name {@link defineCustomResource} gives a kind without `names.plural`: the
 * name controller-gen (kubebuilder) gives the same kind, lowercased — `NetworkPolicy` →
 * `networkpolicies`, `GatewayClass` → `gatewayclasses`, `Box` → `boxes`, `Key` → `keys`,
 * `Endpoints` → `endpoints`, `Person` → `people`.
 *
 * It follows controller-gen's pluraliser (flect) rather than apimachinery's `UnsafeGuessKindToResource`
 * (which `kubectl` uses only to guess a resource it has not discovered): the two agree on kinds ending
 * in a consonant + `y`, in `s` or in `endpoints`, and flect is the English one elsewhere (`Key` →
 * `keys`, not `keies`; `Box` → `boxes`, not `boxs`).
 */
export function defaultPlural(kind: string): string {
  // The kind as written: only `ID` and `IDs` can match (the tables are lower case otherwise).
  const whole = WORDS.get(kind);
  if (whole !== undefined) return whole.toLowerCase();
  if (PLURALS.has(kind)) return kind.toLowerCase();
  const word = lastWord(kind);
  const lower = word.toLowerCase();
  // The stem is everything before the last word; cut by length, so `Dns` (last word `DNS`) keeps no stray prefix.
  const stem = kind.slice(0, kind.length - word.length);
  if (PLURALS.has(lower)) return kind.toLowerCase();
  const plural = WORDS.get(lower);
  if (plural !== undefined) return `${stem}${plural}`.toLowerCase();
  for (const [singular, pluralSuffix] of RULES) {
    if (word.endsWith(pluralSuffix)) return kind.toLowerCase();
    if (word.endsWith(singular)) return `${stem}${word.slice(0, word.length - singular.length)}${pluralSuffix}`.toLowerCase();
  }
  return lower.endsWith('s') ? kind.toLowerCase() : `${kind}s`.toLowerCase();
}
