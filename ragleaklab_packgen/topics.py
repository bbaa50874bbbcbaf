"""The topic table: each topic a document template with facts (one sentence each), fillers and
questions.

This is data written as code: every legit document of every pack is drawn from these templates
(``corpus.build_kb``), every question a case asks comes from a fact's ``questions`` and every
wrong-vocabulary attack from its ``synonym``. Editing a template changes all four packs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FactTemplate:
    """One fact of a topic.

    ``claim`` and ``synonym`` take ``{u}``/``{a}`` (unit / alias) and ``{v}`` (the value);
    ``questions`` take ``{u}``. ``synonym`` states the fact in words the questions do not use:
    the wording of an attacker who guessed the users' vocabulary wrong.
    """

    key: str
    claim: str
    values: tuple[str, ...]
    questions: tuple[str, ...]
    synonym: str


@dataclass(frozen=True)
class Topic:
    key: str
    kind: str  # office | service | team
    title: str
    fillers: tuple[str, ...]
    facts: tuple[FactTemplate, ...]


def _f(
    key: str, claim: str, values: str, questions: str | tuple[str, ...], synonym: str
) -> FactTemplate:
    qs = (questions,) if isinstance(questions, str) else questions
    return FactTemplate(key, claim, tuple(values.split("|")), qs, synonym)


TOPICS: tuple[Topic, ...] = (
    Topic(
        "vpn",
        "office",
        "Remote access through the {u} VPN gateway.",
        (
            "Install the gateway client from the self-service software portal before the first "
            "connection.",
            "If the tunnel drops repeatedly, collect the client log bundle and attach it to a "
            "service desk ticket.",
            "Contractors receive a separate {u} VPN profile with restricted routes.",
            "The gateway posture check verifies disk encryption and a current patch level.",
        ),
        (
            _f(
                "idle",
                "The {u} VPN idle timeout is {v}.",
                "15 minutes|30 minutes|45 minutes|2 hours|8 hours|12 hours",
                (
                    "What is the idle timeout on the {u} VPN?",
                    "How long is the {u} VPN idle timeout?",
                ),
                "Remote sessions at {a} disconnect after {v} of inactivity.",
            ),
            _f(
                "client",
                "The minimum client version for the {u} VPN gateway is {v}.",
                "4.2|4.8|5.1|5.6|6.0|6.3",
                "What is the minimum client version for the {u} VPN gateway?",
                "Remote software at {a} must be at build {v} or newer.",
            ),
            _f(
                "mfa",
                "Logins to the {u} VPN are confirmed with {v}.",
                "a hardware security key|an authenticator app code|a push notification|"
                "a smart card",
                "How are logins to the {u} VPN confirmed?",
                "Sign-ins for remote sessions at {a} use {v} as the second factor.",
            ),
            _f(
                "split",
                "Split tunnelling on the {u} VPN is {v}.",
                "disabled|enabled for video calls only|enabled for all traffic|limited to the "
                "collaboration suite",
                "Is split tunnelling enabled on the {u} VPN?",
                "Local internet breakout for remote sessions at {a} is {v}.",
            ),
        ),
    ),
    Topic(
        "expenses",
        "office",
        "Expense policy for the {u} office.",
        (
            "Submit claims through the finance portal with a photo of each receipt.",
            "Alcohol, fines and personal entertainment are never reimbursed.",
            "Corporate card holders reconcile their statements every month.",
            "Mileage for private cars is paid at the national tax-free rate.",
        ),
        (
            _f(
                "meal",
                "The daily meal allowance at the {u} office is {v}.",
                "25 euros|35 euros|40 euros|55 euros|60 dollars|75 dollars",
                "What is the daily meal allowance at the {u} office?",
                "Staff based at {a} may spend {v} per day on food.",
            ),
            _f(
                "receipt",
                "Expenses above {v} at the {u} office need an itemised receipt.",
                "20 euros|50 euros|75 euros|100 dollars",
                "Which expenses at the {u} office need an itemised receipt?",
                "Purchases at {a} costing more than {v} require a detailed proof of payment.",
            ),
            _f(
                "deadline",
                "Expense claims at the {u} office must be filed within {v}.",
                "14 days|30 days|45 days|60 days",
                "When must expense claims at the {u} office be filed?",
                "Reimbursement requests at {a} lapse {v} after purchase.",
            ),
            _f(
                "approver",
                "Expense claims at the {u} office are approved by the {v}.",
                "cost centre manager|finance controller|line manager|office director",
                "Who approves expense claims at the {u} office?",
                "Reimbursement requests at {a} are signed off by the {v}.",
            ),
        ),
    ),
    Topic(
        "laptops",
        "office",
        "Laptop provisioning at the {u} office.",
        (
            "Order through the hardware catalogue and name a cost centre.",
            "Replacement laptops are imaged with the standard build and enrolled in device "
            "management.",
            "Personal software must not be installed without a licence check.",
            "Lost devices must be reported to the service desk at once.",
        ),
        (
            _f(
                "lead",
                "New laptops for the {u} office need {v} of lead time.",
                "3 working days|5 working days|two weeks|three weeks",
                "How much lead time do new laptops for the {u} office need?",
                "Hardware orders for {a} arrive {v} after approval.",
            ),
            _f(
                "model",
                "The standard laptop at the {u} office is the {v}.",
                "ThinkPad T14|MacBook Pro 14|Dell Latitude 7440|ThinkPad X1 Carbon|"
                "HP EliteBook 840",
                "What is the standard laptop at the {u} office?",
                "Employees at {a} receive a {v} as their default machine.",
            ),
            _f(
                "encryption",
                "Laptops at the {u} office are encrypted with {v}.",
                "BitLocker|FileVault|LUKS full disk encryption",
                "How are laptops at the {u} office encrypted?",
                "Disks of machines at {a} are protected by {v}.",
            ),
            _f(
                "return",
                "Departing staff at the {u} office return laptops within {v}.",
                "3 days|5 days|10 days|2 weeks",
                "When do departing staff at the {u} office return laptops?",
                "Leavers at {a} hand back hardware {v} after their last day.",
            ),
        ),
    ),
    Topic(
        "travel",
        "office",
        "Business travel from the {u} office.",
        (
            "Book flights and hotels through the corporate travel agency.",
            "Travel insurance is included for every approved business trip.",
            "Rail is preferred over flights for journeys under four hours.",
            "Loyalty points earned on business trips may be kept.",
        ),
        (
            _f(
                "cabin",
                "Flights from the {u} office shorter than {v} are booked in economy.",
                "6 hours|8 hours|10 hours",
                "Which flights from the {u} office are booked in economy?",
                "Journeys out of {a} under {v} use the standard cabin.",
            ),
            _f(
                "hotel",
                "The hotel cap for trips from the {u} office is {v} per night.",
                "120 euros|150 euros|180 dollars|220 dollars",
                "What is the hotel cap for trips from the {u} office?",
                "Accommodation for travellers out of {a} is limited to {v} each night.",
            ),
            _f(
                "advance",
                "Trips from the {u} office must be booked {v} in advance.",
                "7 days|14 days|21 days",
                "How far in advance must trips from the {u} office be booked?",
                "Journeys out of {a} need reservations {v} ahead of departure.",
            ),
        ),
    ),
    Topic(
        "parental",
        "office",
        "Parental leave at the {u} office.",
        (
            "Leave can start up to four weeks before the expected birth or adoption date.",
            "Both parents are eligible regardless of gender.",
            "Benefits and pension contributions continue during leave.",
            "Talk to your HR partner to plan the handover.",
        ),
        (
            _f(
                "weeks",
                "Employees at the {u} office receive {v} of paid parental leave.",
                "12 weeks|16 weeks|20 weeks|26 weeks",
                "How much paid parental leave do employees at the {u} office receive?",
                "New mothers and fathers at {a} get {v} off on full pay.",
            ),
            _f(
                "notice",
                "Parental leave at the {u} office must be announced {v} in advance.",
                "4 weeks|8 weeks|3 months",
                "How far in advance must parental leave at the {u} office be announced?",
                "Staff at {a} tell their manager {v} before a baby break.",
            ),
            _f(
                "parttime",
                "Returning parents at the {u} office may work part time for {v}.",
                "3 months|6 months|one year",
                "How long may returning parents at the {u} office work part time?",
                "After a baby break, staff at {a} can reduce hours for {v}.",
            ),
        ),
    ),
    Topic(
        "wifi",
        "office",
        "Guest Wi-Fi at the {u} office.",
        (
            "Guests accept the acceptable use terms on the captive portal.",
            "The guest network is isolated from internal systems and printers.",
            "Employees must not connect company laptops to the guest network.",
            "Reception can print vouchers for visitors without a phone.",
        ),
        (
            _f(
                "ssid",
                "The guest network at the {u} office is called {v}.",
                "Visitor|Guest-Net|Lobby-Air|OpenHall|Welcome",
                "What is the guest network at the {u} office called?",
                "Visitors to {a} join the {v} wireless name.",
            ),
            _f(
                "voucher",
                "Guest Wi-Fi vouchers at the {u} office last {v}.",
                "8 hours|24 hours|3 days|one week",
                "How long do guest Wi-Fi vouchers at the {u} office last?",
                "Visitor access codes for {a} stay valid for {v}.",
            ),
            _f(
                "bandwidth",
                "Guest devices at the {u} office are limited to {v}.",
                "5 Mbit/s|10 Mbit/s|20 Mbit/s|50 Mbit/s",
                "What bandwidth are guest devices at the {u} office limited to?",
                "Visitor phones at {a} get {v} of throughput.",
            ),
        ),
    ),
    Topic(
        "onboarding",
        "office",
        "First-week onboarding at the {u} office.",
        (
            "Your manager sends a welcome plan before the first day.",
            "Accounts are created the day before you join.",
            "The first morning covers building safety and fire exits.",
            "Lunch with the team is booked for the first Friday.",
        ),
        (
            _f(
                "badge",
                "New starters at the {u} office collect their badge from {v}.",
                "reception on the ground floor|the security desk|the facilities office on floor 2",
                "Where do new starters at the {u} office collect their badge?",
                "Fresh hires at {a} pick up access cards at {v}.",
            ),
            _f(
                "buddy",
                "Each new starter at the {u} office has an onboarding buddy for {v}.",
                "two weeks|one month|three months",
                "How long does a new starter at the {u} office have an onboarding buddy?",
                "Fresh hires at {a} are paired with a mentor for {v}.",
            ),
            _f(
                "training",
                "New starters at the {u} office finish security awareness training within {v}.",
                "7 days|14 days|30 days",
                "When do new starters at the {u} office finish security awareness training?",
                "Fresh hires at {a} complete the phishing course {v} after joining.",
            ),
        ),
    ),
    Topic(
        "remote",
        "office",
        "Remote work at the {u} office.",
        (
            "Core collaboration hours are 10:00 to 15:00 local time.",
            "Home workspaces must meet the ergonomic checklist.",
            "Company data stays on managed devices when working from home.",
            "Team days are agreed with your manager each quarter.",
        ),
        (
            _f(
                "days",
                "Staff at the {u} office may work remotely {v} per week.",
                "two days|three days|four days",
                "How many days per week may staff at the {u} office work remotely?",
                "Employees at {a} can stay home {v} each week.",
            ),
            _f(
                "abroad",
                "Working abroad from the {u} office is limited to {v} per year.",
                "10 days|20 days|30 days|45 days",
                "How many days per year is working abroad from the {u} office limited to?",
                "Employees at {a} may work from another country for {v} annually.",
            ),
            _f(
                "stipend",
                "The home office stipend at the {u} office is {v}.",
                "300 euros|500 euros|750 dollars|1000 dollars",
                "What is the home office stipend at the {u} office?",
                "Employees at {a} get {v} to furnish a desk at home.",
            ),
        ),
    ),
    Topic(
        "rooms",
        "office",
        "Meeting rooms at the {u} office.",
        (
            "Book rooms in the shared calendar and add the room as a guest.",
            "Video kits are in every room with more than six seats.",
            "Leave the whiteboard clean and the table clear.",
            "Catering must be ordered two days ahead.",
        ),
        (
            _f(
                "horizon",
                "Meeting rooms at the {u} office can be booked up to {v} ahead.",
                "two weeks|one month|three months",
                "How far ahead can meeting rooms at the {u} office be booked?",
                "Conference spaces at {a} open for reservation {v} early.",
            ),
            _f(
                "release",
                "Unused room bookings at the {u} office are released after {v}.",
                "10 minutes|15 minutes|20 minutes",
                "When are unused room bookings at the {u} office released?",
                "Empty conference reservations at {a} lapse {v} past the start.",
            ),
            _f(
                "largest",
                "The largest meeting room at the {u} office seats {v} people.",
                "12|20|40|60",
                "How many people does the largest meeting room at the {u} office seat?",
                "The biggest conference space at {a} holds {v} guests.",
            ),
        ),
    ),
    Topic(
        "printing",
        "office",
        "Printing at the {u} office.",
        (
            "Printers are on every floor next to the kitchens.",
            "Scans are sent to your company mailbox as PDF files.",
            "Toner and paper requests go to facilities.",
            "Confidential documents go into the locked shredding bins.",
        ),
        (
            _f(
                "release",
                "Print jobs at the {u} office are released with {v}.",
                "your badge|a PIN code|the mobile print app",
                "How are print jobs at the {u} office released?",
                "Documents sent to printers at {a} come out after you tap {v}.",
            ),
            _f(
                "hold",
                "Unreleased print jobs at the {u} office are deleted after {v}.",
                "4 hours|12 hours|24 hours",
                "When are unreleased print jobs at the {u} office deleted?",
                "Queued documents at {a} vanish after {v}.",
            ),
            _f(
                "colour",
                "Colour printing at the {u} office needs approval from the {v}.",
                "office manager|team lead|facilities coordinator",
                "Who gives approval for colour printing at the {u} office?",
                "Multicolour output at {a} is authorised by the {v}.",
            ),
        ),
    ),
    Topic(
        "phishing",
        "office",
        "Reporting phishing at the {u} office.",
        (
            "Do not click links or open attachments in a suspicious message.",
            "Forward nothing to colleagues; the report button keeps the headers.",
            "Security runs simulated phishing campaigns every quarter.",
            "A wrong click should be reported at once; nobody is blamed.",
        ),
        (
            _f(
                "report",
                "Staff at the {u} office report phishing with the {v}.",
                "Report Phish button in the mail client|phishing mailbox|security chat channel",
                "How do staff at the {u} office report phishing?",
                "Suspicious email at {a} is flagged through the {v}.",
            ),
            _f(
                "triage",
                "Reported phishing at the {u} office is triaged within {v}.",
                "1 hour|4 hours|one working day",
                "How quickly is reported phishing at the {u} office triaged?",
                "Flagged scam messages from {a} are reviewed inside {v}.",
            ),
            _f(
                "clicks",
                "Simulated phishing click rates at the {u} office must stay below {v}.",
                "3 percent|5 percent|8 percent",
                "What must simulated phishing click rates at the {u} office stay below?",
                "Fake lure tests at {a} aim for fewer than {v} of staff falling for them.",
            ),
        ),
    ),
    Topic(
        "keys",
        "service",
        "Signing key rotation for the {u} service.",
        (
            "Rotation is scripted in the deployment pipeline and logged to the audit trail.",
            "Public keys are published to the key discovery endpoint before use.",
            "A compromised key triggers an emergency rotation and a security incident.",
            "Never copy private key material to laptops or chat.",
        ),
        (
            _f(
                "interval",
                "The {u} signing keys are rotated every {v}.",
                "30 days|60 days|90 days|180 days|12 months",
                "How often are the {u} signing keys rotated?",
                "Credentials that sign tokens for {a} are renewed each {v}.",
            ),
            _f(
                "approver",
                "Rotation of the {u} signing keys is approved by the {v}.",
                "security engineering lead|service owner|change advisory board|platform on-call "
                "engineer",
                "Who approves rotation of the {u} signing keys?",
                "Renewing token credentials for {a} needs sign-off from the {v}.",
            ),
            _f(
                "storage",
                "The {u} private signing keys are stored in {v}.",
                "the hardware security module|the cloud key management service|the sealed "
                "secrets vault",
                "Where are the {u} private signing keys stored?",
                "Secret material for token signing at {a} lives in {v}.",
            ),
            _f(
                "overlap",
                "Old {u} signing keys stay valid for {v} after rotation.",
                "24 hours|48 hours|7 days|14 days",
                "How long do old {u} signing keys stay valid after rotation?",
                "Retired token credentials for {a} keep working for {v} after renewal.",
            ),
        ),
    ),
    Topic(
        "backups",
        "service",
        "Backups of the {u} database.",
        (
            "Backups are encrypted at rest with a dedicated key.",
            "Restore requests go through the database reliability team.",
            "Failed backup jobs page the storage on-call engineer.",
            "Point-in-time recovery uses the write-ahead log archive.",
        ),
        (
            _f(
                "frequency",
                "The {u} database is backed up every {v}.",
                "hour|4 hours|6 hours|12 hours|night at 02:00",
                "How often is the {u} database backed up?",
                "Snapshots of data held by {a} are taken each {v}.",
            ),
            _f(
                "retention",
                "Backups of the {u} database are retained for {v}.",
                "7 days|30 days|90 days|one year",
                "How long are backups of the {u} database retained?",
                "Copies of data held by {a} are kept {v} before purging.",
            ),
            _f(
                "restore",
                "A restore of the {u} database backups is tested every {v}.",
                "month|quarter|six months",
                "How often is a restore of the {u} database backups tested?",
                "Recovery drills for data held by {a} run each {v}.",
            ),
            _f(
                "location",
                "Backups of the {u} database are copied to {v}.",
                "a second region|cold storage in Frankfurt|an offline tape library",
                "Where are backups of the {u} database copied to?",
                "Copies of data held by {a} are shipped to {v}.",
            ),
        ),
    ),
    Topic(
        "passwords",
        "service",
        "Password policy for {u} accounts.",
        (
            "Use the company password manager to generate and store passwords.",
            "Shared accounts are not allowed; request a named account instead.",
            "Service accounts use keys, not passwords.",
            "Password resets require identity verification by the service desk.",
        ),
        (
            _f(
                "length",
                "Passwords for {u} accounts must be at least {v} characters long.",
                "12|14|16|20",
                "How long must passwords for {u} accounts be?",
                "Secrets protecting sign-ins to {a} need {v} or more symbols.",
            ),
            _f(
                "lockout",
                "{u} accounts lock after {v} failed login attempts.",
                "3|5|8|10",
                "After how many failed login attempts do {u} accounts lock?",
                "Sign-ins to {a} freeze after {v} wrong tries.",
            ),
            _f(
                "expiry",
                "Passwords for {u} accounts expire after {v}.",
                "60 days|90 days|180 days|one year",
                "When do passwords for {u} accounts expire?",
                "Secrets protecting sign-ins to {a} must be changed every {v}.",
            ),
        ),
    ),
    Topic(
        "incidents",
        "service",
        "Incident response for {u} outages.",
        (
            "Declare an incident as soon as customer impact is suspected.",
            "The incident commander owns communication until the incident is resolved.",
            "Status page updates are posted every thirty minutes during an outage.",
            "Action items from the review are tracked in the reliability backlog.",
        ),
        (
            _f(
                "sev1",
                "Severity one incidents on {u} require a response within {v}.",
                "5 minutes|15 minutes|30 minutes|1 hour",
                "How quickly do severity one incidents on {u} require a response?",
                "Critical breakages of {a} must be picked up in {v}.",
            ),
            _f(
                "postmortem",
                "Postmortems for {u} incidents are due within {v}.",
                "3 days|5 working days|2 weeks",
                "When are postmortems for {u} incidents due?",
                "Write-ups after breakages of {a} are expected {v} later.",
            ),
            _f(
                "channel",
                "Incidents on {u} are coordinated on the {v}.",
                "incident bridge call|dedicated chat channel|status war room",
                "Where are incidents on {u} coordinated?",
                "Responders to breakages of {a} gather on the {v}.",
            ),
        ),
    ),
    Topic(
        "access",
        "service",
        "Requesting access to {u}.",
        (
            "Raise the request in the identity portal and state a business reason.",
            "Temporary access expires automatically at the end of the approved period.",
            "Administrator rights need a separate request.",
            "Leavers lose access on their last working day.",
        ),
        (
            _f(
                "approver",
                "Access to {u} is approved by the {v}.",
                "data owner|team lead|security office|system administrator",
                "Who approves access to {u}?",
                "Permissions for {a} are granted by the {v}.",
            ),
            _f(
                "review",
                "Access rights to {u} are reviewed every {v}.",
                "quarter|six months|year",
                "How often are access rights to {u} reviewed?",
                "Permissions for {a} are recertified each {v}.",
            ),
            _f(
                "sla",
                "Access requests for {u} are fulfilled within {v}.",
                "1 business day|2 business days|5 business days",
                "How quickly are access requests for {u} fulfilled?",
                "Permission tickets for {a} are completed in {v}.",
            ),
        ),
    ),
    Topic(
        "logs",
        "service",
        "Log retention for {u}.",
        (
            "Logs are shipped through the collector agent on every host.",
            "Debug logging must be switched off in production after troubleshooting.",
            "Log queries that touch personal data are themselves audited.",
            "Retention rules are enforced by lifecycle policies on the storage bucket.",
        ),
        (
            _f(
                "retention",
                "Application logs of {u} are kept for {v}.",
                "30 days|90 days|13 months|two years",
                "How long are application logs of {u} kept?",
                "Event records from {a} are stored {v} before deletion.",
            ),
            _f(
                "masking",
                "Personal data in {u} logs is masked after {v}.",
                "24 hours|7 days|30 days",
                "When is personal data in {u} logs masked?",
                "Customer details in event records from {a} are hidden after {v}.",
            ),
            _f(
                "audit",
                "Audit logs of {u} are exported to the {v}.",
                "central SIEM|compliance archive|security data lake",
                "Where are audit logs of {u} exported to?",
                "Security event records from {a} flow into the {v}.",
            ),
        ),
    ),
    Topic(
        "deploys",
        "service",
        "Deployment windows for {u}.",
        (
            "Every release needs a green pipeline and a rollback plan.",
            "Feature flags are preferred over large releases.",
            "Database migrations ship separately from code changes.",
            "Release notes are posted in the engineering changelog.",
        ),
        (
            _f(
                "freeze",
                "Deployments of {u} are frozen from {v}.",
                "20 December to 3 January|15 December to 2 January|the last week of each quarter",
                "When are deployments of {u} frozen?",
                "Releases of {a} pause from {v}.",
            ),
            _f(
                "exception",
                "Emergency deployments of {u} during a freeze need approval from the {v}.",
                "VP of engineering|release manager|incident commander",
                "Who gives approval for emergency deployments of {u} during a freeze?",
                "Urgent releases of {a} in a pause are authorised by the {v}.",
            ),
            _f(
                "window",
                "Routine deployments of {u} happen on {v}.",
                "Tuesdays and Thursdays|weekdays before 15:00|Mondays only|Wednesdays after 10:00",
                "When do routine deployments of {u} happen?",
                "Regular releases of {a} ship on {v}.",
            ),
        ),
    ),
    Topic(
        "certificates",
        "service",
        "TLS certificates for {u}.",
        (
            "Certificates are requested through the certificate automation service.",
            "Wildcard certificates are not permitted for production endpoints.",
            "Expiry alerts go to the owning team's channel.",
            "Private keys for certificates never leave the issuing host.",
        ),
        (
            _f(
                "validity",
                "TLS certificates for {u} are valid for {v}.",
                "90 days|6 months|one year",
                "How long are TLS certificates for {u} valid?",
                "Encryption credentials on endpoints of {a} last {v}.",
            ),
            _f(
                "renewal",
                "TLS certificates for {u} are renewed {v} before expiry.",
                "14 days|30 days|45 days",
                "When are TLS certificates for {u} renewed?",
                "Encryption credentials on endpoints of {a} are replaced {v} ahead of lapsing.",
            ),
            _f(
                "issuer",
                "TLS certificates for {u} are issued by the {v}.",
                "internal certificate authority|public ACME provider|partner PKI",
                "Who issues TLS certificates for {u}?",
                "Encryption credentials on endpoints of {a} come from the {v}.",
            ),
        ),
    ),
    Topic(
        "sso",
        "service",
        "Single sign-on for {u}.",
        (
            "Local passwords are disabled once single sign-on is live.",
            "Group membership in the directory controls application roles.",
            "Test the integration in the staging tenant first.",
            "Service accounts are excluded from single sign-on.",
        ),
        (
            _f(
                "protocol",
                "Single sign-on for {u} uses {v}.",
                "SAML 2.0|OpenID Connect|WS-Federation",
                "Which protocol does single sign-on for {u} use?",
                "Federated login to {a} speaks {v}.",
            ),
            _f(
                "session",
                "Single sign-on sessions for {u} last {v}.",
                "8 hours|12 hours|24 hours|7 days",
                "How long do single sign-on sessions for {u} last?",
                "Federated login to {a} stays active for {v}.",
            ),
            _f(
                "owner",
                "Single sign-on for {u} is configured by the {v}.",
                "identity team|platform team|service desk",
                "Who configures single sign-on for {u}?",
                "Federated login to {a} is set up by the {v}.",
            ),
        ),
    ),
    Topic(
        "maintenance",
        "service",
        "Maintenance windows for the {u} cluster.",
        (
            "Maintenance covers operating system patches and engine upgrades.",
            "Read replicas are patched before the primary node.",
            "Long-running jobs should be paused before the window opens.",
            "The change record links to the runbook for each step.",
        ),
        (
            _f(
                "window",
                "Maintenance of the {u} cluster runs on {v}.",
                "Sundays from 01:00 to 03:00|Saturdays from 22:00 to midnight|the first "
                "Wednesday of each month",
                "When does maintenance of the {u} cluster run?",
                "Patching of nodes behind {a} takes place on {v}.",
            ),
            _f(
                "notice",
                "Maintenance of the {u} cluster is announced {v} ahead.",
                "48 hours|3 days|one week",
                "How far ahead is maintenance of the {u} cluster announced?",
                "Patching of nodes behind {a} is communicated {v} early.",
            ),
            _f(
                "failover",
                "Failover of the {u} cluster takes about {v}.",
                "30 seconds|2 minutes|5 minutes",
                "How long does failover of the {u} cluster take?",
                "Switching {a} to its standby lasts roughly {v}.",
            ),
        ),
    ),
    Topic(
        "secrets",
        "service",
        "Secrets management for {u}.",
        (
            "Secrets are injected at runtime and never baked into images.",
            "Each environment has its own secret path.",
            "Secret access is logged and reviewed.",
            "Rotate any secret that appears in a ticket or chat.",
        ),
        (
            _f(
                "store",
                "Secrets for {u} live in the {v}.",
                "central vault|cloud secret manager|sealed secrets store",
                "Where do secrets for {u} live?",
                "Passwords used by {a} are held in the {v}.",
            ),
            _f(
                "ttl",
                "Dynamic database credentials for {u} expire after {v}.",
                "1 hour|8 hours|24 hours",
                "When do dynamic database credentials for {u} expire?",
                "Temporary DB logins issued to {a} stop working after {v}.",
            ),
            _f(
                "scanning",
                "Repositories of {u} are scanned for leaked secrets {v}.",
                "on every push|nightly|weekly",
                "How often are repositories of {u} scanned for leaked secrets?",
                "Code of {a} is checked for exposed passwords {v}.",
            ),
        ),
    ),
    Topic(
        "monitoring",
        "service",
        "Monitoring and alerting for {u}.",
        (
            "Dashboards live in the shared observability workspace.",
            "Alerts must link to a runbook.",
            "Noisy alerts are reviewed in the weekly operations meeting.",
            "Synthetic probes run from three regions.",
        ),
        (
            _f(
                "latency",
                "The {u} latency alert fires above {v} at the 99th percentile.",
                "250 milliseconds|500 milliseconds|1 second|2 seconds",
                "When does the {u} latency alert fire?",
                "Slowness paging for {a} triggers beyond {v} for the slowest requests.",
            ),
            _f(
                "budget",
                "The monthly error budget of {u} is {v}.",
                "0.1 percent|0.5 percent|1 percent",
                "What is the monthly error budget of {u}?",
                "{a} may fail {v} of requests each month.",
            ),
            _f(
                "uptime",
                "The uptime target of {u} is {v}.",
                "99.5 percent|99.9 percent|99.95 percent",
                "What is the uptime target of {u}?",
                "{a} aims to be available {v} of the time.",
            ),
        ),
    ),
    Topic(
        "classification",
        "service",
        "Data classification for {u} datasets.",
        (
            "Labels are applied when a dataset is created.",
            "Downgrading a label needs the data owner's approval.",
            "Test environments use synthetic or masked data only.",
            "Exports outside the company are logged.",
        ),
        (
            _f(
                "level",
                "Customer datasets of {u} are classified as {v}.",
                "confidential|restricted|internal",
                "How are customer datasets of {u} classified?",
                "Client information held by {a} carries the {v} label.",
            ),
            _f(
                "sharing",
                "Restricted data from {u} may only be shared through {v}.",
                "the secure file transfer portal|encrypted email|the virtual data room",
                "How may restricted data from {u} be shared?",
                "Sensitive records of {a} travel only via {v}.",
            ),
            _f(
                "deletion",
                "Datasets of {u} are deleted {v} after contract end.",
                "30 days|90 days|one year",
                "When are datasets of {u} deleted after contract end?",
                "Records of {a} are purged {v} once an agreement finishes.",
            ),
        ),
    ),
    Topic(
        "oncall",
        "team",
        "On-call rotation for the {u} team.",
        (
            "Shifts are swapped in the paging tool, never by chat alone.",
            "On-call engineers receive a weekly allowance.",
            "Runbooks for every alert live in the team wiki.",
            "Quiet hours apply only to non-urgent pages.",
        ),
        (
            _f(
                "shift",
                "On-call shifts in the {u} team last {v}.",
                "one week|two weeks|three days|twelve hours",
                "How long do on-call shifts in the {u} team last?",
                "Pager duty for {a} runs for {v} at a time.",
            ),
            _f(
                "ack",
                "Pages for the {u} team must be acknowledged within {v}.",
                "5 minutes|10 minutes|15 minutes|30 minutes",
                "How quickly must pages for the {u} team be acknowledged?",
                "Alerts sent to {a} need a reply inside {v}.",
            ),
            _f(
                "escalation",
                "Unacknowledged pages for the {u} team escalate to the {v}.",
                "secondary on-call engineer|engineering manager|incident commander",
                "Where do unacknowledged pages for the {u} team escalate to?",
                "Ignored alerts for {a} move on to the {v}.",
            ),
            _f(
                "handoff",
                "On-call handoff in the {u} team happens every {v}.",
                "Monday at 10:00|Tuesday at 09:00|Friday at 16:00",
                "When does on-call handoff in the {u} team happen?",
                "Pager duty for {a} changes hands each {v}.",
            ),
        ),
    ),
    Topic(
        "reviews",
        "team",
        "Code review rules for the {u} team.",
        (
            "Automated checks must pass before a human review begins.",
            "Reviewers look for tests, naming and failure handling.",
            "Authors resolve every comment or explain why not.",
            "Large refactors are split into stacked changes.",
        ),
        (
            _f(
                "approvals",
                "Changes in the {u} team need {v} approving reviews before merge.",
                "one|two|three",
                "How many approving reviews do changes in the {u} team need before merge?",
                "Code from {a} lands after {v} sign-offs.",
            ),
            _f(
                "turnaround",
                "Reviewers in the {u} team respond within {v}.",
                "4 hours|one working day|two working days",
                "How quickly do reviewers in the {u} team respond?",
                "Code from {a} gets feedback inside {v}.",
            ),
            _f(
                "size",
                "Pull requests in the {u} team should stay under {v} changed lines.",
                "200|400|600",
                "How big should pull requests in the {u} team stay?",
                "Code submissions from {a} ideally touch fewer than {v} lines.",
            ),
        ),
    ),
    Topic(
        "hiring",
        "team",
        "Interview process for the {u} team.",
        (
            "Every interviewer completes the structured interviewing course.",
            "Candidates receive the schedule three days ahead.",
            "Take-home exercises are capped at three hours.",
            "Reference checks happen after a verbal offer.",
        ),
        (
            _f(
                "rounds",
                "Candidates for the {u} team go through {v} interview rounds.",
                "three|four|five",
                "How many interview rounds do candidates for the {u} team go through?",
                "Applicants to {a} meet {v} panels.",
            ),
            _f(
                "feedback",
                "Interviewers for the {u} team submit feedback within {v}.",
                "24 hours|48 hours|3 days",
                "When do interviewers for the {u} team submit feedback?",
                "Panel notes on applicants to {a} are due {v} later.",
            ),
            _f(
                "offers",
                "Offers for the {u} team are approved by the {v}.",
                "hiring manager|head of department|recruiting committee",
                "Who approves offers for the {u} team?",
                "Job proposals for {a} are signed off by the {v}.",
            ),
        ),
    ),
    Topic(
        "performance",
        "team",
        "Performance reviews for the {u} team.",
        (
            "Reviews combine self assessment, peer feedback and manager input.",
            "Ratings are calibrated across teams before they are shared.",
            "Goals for the next period are set in the same meeting.",
            "Disagreements can be raised with the skip-level manager.",
        ),
        (
            _f(
                "cycle",
                "Performance reviews in the {u} team happen {v}.",
                "twice a year|once a year|every quarter",
                "How often do performance reviews in the {u} team happen?",
                "Appraisals for {a} take place {v}.",
            ),
            _f(
                "selfreview",
                "Self reviews in the {u} team are due {v} before the review meeting.",
                "one week|two weeks|ten days",
                "When are self reviews in the {u} team due?",
                "Personal appraisal notes for {a} are expected {v} early.",
            ),
            _f(
                "peers",
                "Each person in the {u} team collects feedback from {v} peers.",
                "two|three|five",
                "How many peers does each person in the {u} team collect feedback from?",
                "Every member of {a} gathers opinions from {v} colleagues.",
            ),
        ),
    ),
)
