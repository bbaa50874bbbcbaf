"""A small multilingual lexicon for the built-in matcher: function words to ignore, and number
words and common words mapped to one concept across English, German, French, Spanish, Italian,
Portuguese and Dutch.

Why: a translated text keeps its names, numbers and codes, and many cognates
(``documents``/``documentos``), but its function words and everyday words change completely. The
matcher drops the function words (they carry no content in any language) and reads the listed
words as their concept, so ``"never"`` and ``"niemals"`` count as the same word. The lists are
deliberately short and generic (the vocabulary of instructions, policies and help-desk answers),
not tuned to any pack; every entry is folded (casefold, no accents) like the matcher's tokens.
"""

from __future__ import annotations

import unicodedata

# Function words of en, de, fr, es, it, pt, nl (articles, pronouns, prepositions, conjunctions,
# auxiliaries): no content in any language.
_STOPWORDS = """
a an the and or but if of to in on at by for with from as into onto about than then that this these
those there here it its is are was were be been being am do does did done have has had having
will would shall should can could may might must i me my we us our you your yours he him his she
her they them their what which who whom whose when where why how all any each every some such no
nor not only own same so too very just also s t d ll re ve m o y let lets please sure okay ok yes
der die das den dem des ein eine einer eines einem einen und oder aber wenn als auf aus bei mit
nach von vor zu zum zur ist sind war waren sein bin bist hat haben hatte wird werden wurde kann
können muss müssen soll sollen darf dürfen ich du er sie es wir ihr mich dich sich uns euch mein
dein ihr ihre ihren ihrem ihrer unser euer dieser diese dieses diesen jeder jede jedes im am um
für über unter durch gegen ohne auch nur noch schon sehr dass was wer wie wo wann warum nicht
kein keine keinen
le la les l un une des du de d et ou mais si que qui quoi dont où au aux en dans par pour sur sous
avec sans est sont était etre être avoir a ont je tu il elle nous vous ils elles me te se mon ma
mes ton ta tes son sa ses notre nos votre vos leur leurs ce cet cette ces ne pas plus très aussi
y n c j qu
el lo los las una unos unas del al y e o u pero si que quien como cuando donde por para con sin
sobre entre es son era ser estar está están ha han he yo tú él ella nosotros vosotros ellos ellas
mi mis tu tus su sus nuestro nuestra este esta estos estas ese esa no muy también sólo solo
il lo gli i uno dei degli delle della dello di da del nel nella con su per tra fra e ed o ma se
che chi non è sono era io noi voi loro questo questa questi queste quello quella molto anche
o os as um uma uns umas do da das no na nos nas em por com sem que se não é são era eu ele
ela nós eles elas meu minha seu sua este esta isso isto muito também
de het een en of maar als dan dat die dit deze van in op aan met voor naar bij uit om door over
is zijn was waren ben heeft hebben had wordt worden kan kunnen moet moeten zal zullen ik jij je
hij zij ze wij we jullie mijn jouw zijn haar ons onze niet geen ook zeer heel
"""

# Concept -> its words in several languages. A word ending in ``*`` is a stem: every token that
# starts with it (and is at least as long) maps to the concept, which absorbs inflection and
# German compounds (``anweisungen``, ``dokumentenablage``).
_CONCEPTS = """
0: zero null zéro zero cero nul
1: one eins uno um één
2: two zwei deux dos due dois twee
3: three drei trois tres tre três drie
4: four vier quatre cuatro quattro quatro
5: five fünf cinq cinco cinque vijf
6: six sechs seis sei zes
7: seven sieben sept siete sette sete zeven
8: eight acht huit ocho otto oito
9: nine neun neuf nueve nove negen
10: ten zehn dix diez dieci dez tien
11: eleven elf onze once undici
12: twelve zwölf douze doce dodici twaalf
14: fourteen vierzehn quatorze catorce quattordici veertien
15: fifteen fünfzehn quinze quince quindici vijftien
20: twenty zwanzig vingt veinte venti vinte twintig
30: thirty dreißig dreissig trente treinta trenta trinta dertig
60: sixty sechzig soixante sesenta sessanta sessenta zestig
90: ninety neunzig nonante noventa novanta
100: hundred hundert cent cien ciento cento cem honderd
1000: thousand tausend mille mil duizend
day: day days tag tage tagen jour jours día dias días giorno giorni dia dag dagen
week: week weeks woche wochen semaine semaines semana semanas settimana settimane
month: month months monat monate monaten mois mes meses mese mesi maand maanden
year: year years jahr jahre jahren an ans année années año años anno anni ano anos jaar jaren
hour: hour hours stunde stunden heure heures hora horas ora ore uur
minute: minute minutes minuten minuto minutos minuti minuut
business: business geschäft* ouvrable ouvrables hábil hábiles lavorativ* útil úteis werkdag*
never: never niemals nie jamais nunca mai nooit
never: forbidden prohibited verboten untersagt interdit interdits prohibido prohibida vietato
never: proibido verboden
always: always immer toujours siempre sempre altijd
only: only nur seulement uniquement solamente únicamente soltanto apenas alleen
answer: answer* antwort* beantwort* répon* respond* respuesta* rispost* antwoord*
question: question* frage* pregunta* domand* pergunta* vraag*
instruction: instruction* anweisung* instruktion* consigne*
instruction: instrucci* istruzion* instruç* instructie*
instruction: rule rules regla reglas règle règles regel regeln regola regole regra regras
document: document* dokument* documento* documenti documentos doc docs
share: share* teilen teile weitergeben partager partage* compartir compart* condivid* delen
reveal: reveal* verraten preisgeben offenbaren révéler
reveal: révèle* divulg* revelar revela* rivelar* onthul*
personal: personal persönlich* personnel* personne* personal* personali* persoonlijk*
information: info information* informationen informação informações informazion* informatie*
information: data datos données daten dati dados gegevens
employee: employee* mitarbeiter* angestellte* employé* salarié*
employee: empleado* dipendent* funcionári* werknemer* medewerker*
customer: customer* kunde* kunden* client* cliente* klant*
user: user* benutzer* nutzer* utilisateur* usuario* utente* utent* usuário* gebruiker*
assistant: assistant* assistent* asistente* assistente*
help: help* hilfe helfen aide aider ayuda* aiuto* ajuda* hulp assistance asistencia assistenza
help: assistência
short: short* kurz* court* courte* brève* bref corto* corta* breve* kort* brief* concise*
know: know knows known wissen weiß weiss sais sait savoir saber sé sapere so sei weet weten
know: sabes sabe sabemos
retrieve: retriev* abgerufen* abrufen* récupér* recuperad* recuperat* opgehaald*
policy: policy policies richtlinie* politique* política* politica* polític* beleid*
secret: secret* geheim* secreto* segreto* segredo*
confidential: confidential* vertraulich* confidentiel* confidencial* confidenzial*
internal: internal* intern* interne* interno* interna* interni* in-house inhouse
authority: authority authorities autoridad autorité autorità autoridade behörde* autoriteit
staff: staff personal belegschaft personnel plantilla persoal
approve: approv* genehmig* approuv* aprob* approva* aprova* goedgekeur* goedkeur*
request: request* anfrage* antrag* anträge* demande*
request: solicitud* richiest* pedido* solicitaç* aanvra* verzoek*
access: access* zugang* zugriff* accès acceso* accesso* acesso* toegang*
manager: manager* vorgesetzt* responsable* gerente* responsabile* gestor*
office: office* büro* bureau* oficina* ufficio* escritório* kantoor*
team: team* équipe* equipo* equipa* squadra*
within: within innerhalb binnen dans endéans dentro entro
every: every jede jeden jeder chaque cada ogni elke
use: use uses used using verwend* benutz* utilis* usar usa usando utilizz* gebruik*
marker: marker* markierung* marqueur* marcador* marcatore* markering*
deployment: deployment* bereitstellung* déploiement* despliegue* implementaz* implantaç* uitrol*
hold: hold holds contain contains enthält enthalten contient contiennent contiene contienen
hold: contengan contenga contém bevat bevatten
say: tell tells told
support: support supports supported unterstütz* soporte* supporto suporte ondersteun*
app: app apps application applications anwendung* aplicación aplicaciones applicazion* aplicativo*
app: applicatie*
mobile: mobile mobil móvil mobiel
account: account accounts konto konten compte comptes cuenta cuentas conto conti conta contas
account: rekening*
card: card cards karte karten carte cartes tarjeta tarjetas cartão cartões kaart kaarten
transfer: transfer* überweisung* virement* transferencia* bonifico bonifici transferência*
transfer: overschrijving*
advice: advice advise* beratung ratschlag* conseil conseils consejo consejos consigli* conselho*
advice: advies
invest: invest* anlage* inversión inversiones investiment*
give: give gives given giving geben gibt donner donne donnes dar dare dai dá geven geeft
discuss: discuss* besprech* diskutier* discut* hablar hables habla parler parle parles bespreken
other: other others andere anderen anderer anderes autre autres otro otra otros otras altro altri
other: altra altre outro outra outros outras
call: call calls called anrufen anruf appeler appelle llamar llama llame chiamare chiama ligar ligue
call: bellen bel
line: line lines linie ligne lignes línea líneas linea linee linha linhas lijn
cover: cover covers covered abdecken decken couvre couvrent cubre cubren copre coprono cobre cobrem
cover: dekken
provide: provid* bereitgestellt* fourni fournis fournie fournies proporcionad* fornit* fornecid*
provide: verstrekt* aangeleverd*
block: block* sperr* bloqu* blocc*
security: security sicherheit* sécurité seguridad sicurezza segurança beveiliging*
certificate: certificat* zertifikat* certificado* certificato certificati certificaat*
valid: valid gültig* válid* valide valides valido valida validi geldig*
expire: expir* ablauf* abgelaufen scadenz* caducidad vervalt verlopen
renew: renew* erneuer* renouvel* renov* rinnov* vernieuw*
backup: backup* sicherung* sauvegard* respald*
database: database* datenbank*
restore: restor* wiederherstell* restaur* ripristin* herstel*
encrypt: encrypt* verschlüssel* chiffr* cifrad* crittograf* criptograf* versleutel*
review: review* überprüf* relecture* relecteur* revue revues revisión revisiones revisione revisioni
review: revisão revisões
change: change changes changed änderung* geändert* modification* modificación* modifica modifiche
change: mudança* wijziging*
delete: delet* gelöscht* löschen supprim* eliminad* cancellat* apagad* verwijder*
retain: retain* retention aufbewahr* conserv* bewaar*
limit: limit* begrenz* grenze limite limites límite límites limiet*
guest: guest guests gast gäste invité invités invitado invitados ospite ospiti convidado* gasten
device: device devices gerät geräte appareil* dispositiv* apparaat* apparaten
expense: expense* spesen dépense* frais gasto gastos spese despesa* onkost* uitgave*
receipt: receipt* beleg belege quittung* reçu reçus recibo recibos ricevut* bonnetje*
travel: travel* reise reisen voyage* viaje viajes viaggi* viagem viagens
flight: flight flights flug flüge vuelo vuelos volo voli voo voos vlucht*
training: training schulung* formación formazione formação opleiding*
incident: incident* vorfall vorfälle incidente*
report: report reports reported reporting melden meldet gemeldet signaler signalez signalé reportar
report: informar segnalare segnala
engineer: engineer* ingenieur* ingénieur* ingeniero* ingegner* engenheir*
need: need needs needed require* brauchen braucht benötig* erforderlich besoin nécessit* necesita*
need: necesit* necessit* richied* nodig vereist
paid: paid bezahlt* payé payés payée pagad* pagat* betaald
escalate: escalat* eskalier* escalad* escalon*
say: say says said sagen sage dire dis decir di dizer zeggen zeg
name: name names nennen nenne nommer nomme nombrar nombre nomina* nomear noem*
name: cite cites citing cita citar citer zitier* citare
"""


def fold(token: str) -> str:
    """*token* without accents (NFKD, combining marks dropped): ``"système"`` -> ``"systeme"``."""
    if token.isascii():
        return token
    decomposed = unicodedata.normalize("NFKD", token)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


STOPWORDS: frozenset[str] = frozenset(fold(w) for w in _STOPWORDS.split())


def _concepts() -> tuple[dict[str, str], dict[str, str]]:
    words: dict[str, str] = {}
    stems: dict[str, str] = {}
    for line in _CONCEPTS.strip().splitlines():
        concept, _, entries = line.partition(":")
        for entry in entries.split():
            if entry.endswith("*"):
                stems.setdefault(fold(entry[:-1]), concept)
            else:
                words.setdefault(fold(entry), concept)
    return words, stems


_WORDS, _STEMS = _concepts()
_STEM_LENGTHS = sorted({len(s) for s in _STEMS}, reverse=True)


def concept(token: str) -> str | None:
    """The concept *token* (folded) names, as ``"#concept"``; None when the lexicon lacks it.

    An exact word wins over a stem; among stems the longest one that *token* starts with wins.
    """
    hit = _WORDS.get(token)
    if hit is None:
        for size in _STEM_LENGTHS:
            if size <= len(token):
                hit = _STEMS.get(token[:size])
                if hit is not None:
                    break
    return None if hit is None else f"#{hit}"
