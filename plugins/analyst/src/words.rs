//! The reading in words, in English and in French.

use alloc::format;
use alloc::string::String;

use crate::reading::Figures;
use crate::{Change, Classification, Incident, IncidentKind, Language, Report};

use Language::{English as En, French as Fr};

fn kind(language: Language, kind: IncidentKind) -> &'static str {
    match (language, kind) {
        (En, IncidentKind::CredentialStuffing) => "credential stuffing",
        (En, IncidentKind::PasswordSpraying) => "password spraying",
        (En, IncidentKind::BruteForce) => "brute force on one account",
        (En, IncidentKind::PushBombing) => "push bombing",
        (En, IncidentKind::RecoveryAbuse) => "password recovery abuse",
        (En, IncidentKind::SignUpAbuse) => "mass sign-up",
        (En, IncidentKind::SecondFactorGuessing) => "second factor guessed after the password",
        (Fr, IncidentKind::CredentialStuffing) => "bourrage d'identifiants",
        (Fr, IncidentKind::PasswordSpraying) => "pulvérisation de mots de passe",
        (Fr, IncidentKind::BruteForce) => "force brute sur un compte",
        (Fr, IncidentKind::PushBombing) => "bombardement de notifications",
        (Fr, IncidentKind::RecoveryAbuse) => "abus de la récupération de mot de passe",
        (Fr, IncidentKind::SignUpAbuse) => "inscriptions en masse",
        (Fr, IncidentKind::SecondFactorGuessing) => "second facteur deviné après le mot de passe",
    }
}

/// The reading's verdict in one sentence.
fn verdict(language: Language, classification: Classification, figures: &Figures) -> String {
    let unknown = figures.unknown_percent();
    let hostile = figures.hostile_percent();
    match (language, classification) {
        (En, Classification::CredentialStuffing) => format!(
            "A list of leaked names and passwords was being worked through: {unknown}% of the failures named \
             accounts the realm never had, and {hostile}% of the sources were datacenter or Tor networks."
        ),
        (Fr, Classification::CredentialStuffing) => format!(
            "Une liste d'identifiants divulgués était essayée : {unknown} % des échecs visaient des comptes que \
             le domaine n'a jamais eus, et {hostile} % des sources étaient des réseaux de centres de données ou Tor."
        ),
        (En, Classification::PasswordSpraying) => format!(
            "Common passwords were tried against many real accounts, up to {} accounts from one source, about \
             one try per account.",
            figures.widest
        ),
        (Fr, Classification::PasswordSpraying) => format!(
            "Des mots de passe courants ont été essayés sur de nombreux comptes réels, jusqu'à {} comptes depuis \
             une même source, environ un essai par compte.",
            figures.widest
        ),
        (En, Classification::BruteForce) => {
            "Someone was guessing the password of one or two accounts from addresses they were never used at.".into()
        }
        (Fr, Classification::BruteForce) => {
            "Quelqu'un cherchait à deviner le mot de passe d'un ou deux comptes depuis des adresses jamais \
             utilisées par eux."
                .into()
        }
        (En, Classification::PushBombing) => {
            "Someone holding a password kept sending sign-in requests to its owner's phone, hoping for an approval \
             by mistake."
                .into()
        }
        (Fr, Classification::PushBombing) => {
            "Quelqu'un qui détient un mot de passe envoyait sans relâche des demandes de connexion au téléphone de \
             son titulaire, espérant une approbation par erreur."
                .into()
        }
        (En, Classification::RecoveryAbuse) => {
            "Password recovery was requested for many accounts, flooding their owners' mailboxes.".into()
        }
        (Fr, Classification::RecoveryAbuse) => {
            "La récupération de mot de passe a été demandée pour de nombreux comptes, inondant la messagerie de \
             leurs titulaires."
                .into()
        }
        (En, Classification::SignUpAbuse) => {
            "Accounts were asked for in bulk from one address, to fill the realm with accounts nobody owns or to \
             flood other people's mailboxes with confirmation e-mail."
                .into()
        }
        (Fr, Classification::SignUpAbuse) => {
            "Des comptes ont été demandés en masse depuis une même adresse, pour remplir le domaine de comptes sans \
             titulaire ou inonder la messagerie d'autres personnes d'e-mails de confirmation."
                .into()
        }
        (En, Classification::SecondFactorGuessing) => {
            "Someone holding a password kept guessing its owner's second factor: each wrong code came after the \
             right password."
                .into()
        }
        (Fr, Classification::SecondFactorGuessing) => {
            "Quelqu'un qui détient un mot de passe cherchait à deviner le second facteur de son titulaire : chaque \
             code erroné suivait le bon mot de passe."
                .into()
        }
        (En, Classification::LegitimateSurge) => format!(
            "This looks like the realm's own people, not an attack: ordinary addresses, only real accounts, about \
             {} tries per account as people retry their own password (after a password reset campaign, an \
             outage or a new application release, say).",
            figures.tries_per_account()
        ),
        (Fr, Classification::LegitimateSurge) => format!(
            "Cela ressemble aux utilisateurs du domaine eux-mêmes, pas à une attaque : adresses ordinaires, \
             comptes réels uniquement, environ {} essais par compte, chacun réessayant son propre mot de passe \
             (après une campagne de réinitialisation, une panne ou une nouvelle version d'application, par exemple).",
            figures.tries_per_account()
        ),
        (En, Classification::Misconfiguration) => format!(
            "One ordinary address kept failing against a single account{}: the pattern of a client or script \
             holding a password that was changed, rather than of someone guessing.",
            if figures.returns > 0 { " and came back after each block" } else { "" }
        ),
        (Fr, Classification::Misconfiguration) => format!(
            "Une seule adresse ordinaire échouait sans cesse sur un seul compte{} : le signe d'un client ou d'un \
             script qui garde un mot de passe changé depuis, plutôt que de quelqu'un qui devine.",
            if figures.returns > 0 { " et revenait après chaque blocage" } else { "" }
        ),
        (En, Classification::Inconclusive) => "The figures are too few to say what this was.".into(),
        (Fr, Classification::Inconclusive) => "Les chiffres sont trop peu nombreux pour conclure.".into(),
    }
}

pub fn what_happened(
    language: Language,
    incident: &Incident,
    figures: &Figures,
    classification: Classification,
) -> String {
    let title = kind(language, incident.kind);
    let (detections, minutes) = (incident.detections, incident.minutes);
    let verdict = verdict(language, classification, figures);
    match language {
        En => format!(
            "Attack protection detected {title} {detections} time(s) over {minutes} minute(s), from {} source(s) \
             and against {} account(s). {verdict}",
            incident.distinct_sources, incident.distinct_accounts
        ),
        Fr => format!(
            "La protection contre les attaques a détecté : {title}, {detections} fois en {minutes} minute(s), depuis \
             {} source(s) et sur {} compte(s). {verdict}",
            incident.distinct_sources, incident.distinct_accounts
        ),
    }
}

pub fn what_was_done(language: Language, incident: &Incident, figures: &Figures) -> String {
    let Figures { blocks, locks, pauses, exposures, lifted, longest_minutes, .. } = *figures;
    let refused = incident.refused_attempts;
    match language {
        En => format!(
            "{blocks} source block(s), {locks} account(s) closed to unknown addresses, {pauses} account(s) with \
             sign-in requests to phones paused, {exposures} password(s) marked exposed; the longest measure was \
             set for {longest_minutes} minute(s). {refused} attempt(s) were refused while they held; {lifted} \
             measure(s) were lifted by an operator."
        ),
        Fr => format!(
            "{blocks} blocage(s) de source, {locks} compte(s) fermé(s) aux adresses inconnues, {pauses} compte(s) \
             dont les demandes de connexion au téléphone sont suspendues, {exposures} mot(s) de passe marqué(s) \
             exposé(s) ; la mesure la plus longue durait {longest_minutes} minute(s). {refused} tentative(s) ont \
             été refusées ; {lifted} mesure(s) ont été levées par un opérateur."
        ),
    }
}

pub fn exposed_passwords(language: Language, incident: &Incident) -> String {
    match (language, incident.exposed_passwords) {
        (En, 0) => "None: no correct password arrived from the attack.".into(),
        (Fr, 0) => "Aucun : aucun mot de passe correct n'est venu de l'attaque.".into(),
        (En, n) => format!(
            "{n} correct password(s) arrived from the attack. Sign-in with them was refused as if they were wrong; \
             each account must choose a new password at its next sign-in, and its owner was told by e-mail."
        ),
        (Fr, n) => format!(
            "{n} mot(s) de passe correct(s) sont venus de l'attaque. La connexion a été refusée comme s'ils étaient \
             faux ; chaque compte doit choisir un nouveau mot de passe à sa prochaine connexion, et son titulaire \
             a été prévenu par e-mail."
        ),
    }
}

pub fn why(language: Language, change: Change, value: u32, classification: Classification) -> String {
    let listed = matches!(classification, Classification::CredentialStuffing | Classification::PasswordSpraying);
    match (language, change) {
        (En, Change::RefuseBreachedPasswords) if listed => {
            "The attack worked from known passwords; refusing breached ones takes them out of its lists.".into()
        }
        (En, Change::RefuseBreachedPasswords) => {
            "Passwords found in breaches are the first an attacker tries; refuse them.".into()
        }
        (Fr, Change::RefuseBreachedPasswords) => {
            "Les mots de passe issus de fuites sont les premiers essayés ; refusez-les.".into()
        }
        (En, Change::LockOutSooner) => format!("Lock an address out of an account after {value} failures."),
        (Fr, Change::LockOutSooner) => format!("Bloquer une adresse sur un compte après {value} échecs."),
        (En, Change::LockOutLonger) => format!("Keep such a lock for {value} minutes, which slows guessing down."),
        (Fr, Change::LockOutLonger) => format!("Maintenir ce blocage {value} minutes, ce qui ralentit les essais."),
        (En, Change::LockOutNewAccounts) => "The realm lockout is off; turn it on for every account.".into(),
        (Fr, Change::LockOutNewAccounts) => {
            "Le verrouillage du domaine est désactivé ; activez-le pour tous les comptes.".into()
        }
        (En, Change::RequireLongerPasswords) => {
            format!("Passwords of at least {value} characters are far harder to guess or find in a list.")
        }
        (Fr, Change::RequireLongerPasswords) => {
            format!("Des mots de passe d'au moins {value} caractères sont bien plus difficiles à deviner.")
        }
    }
}

pub fn report(language: Language, incident: &Incident, figures: &Figures, classification: Classification) -> Report {
    let attack = !matches!(
        classification,
        Classification::LegitimateSurge | Classification::Misconfiguration | Classification::Inconclusive
    );
    let exposed = incident.exposed_passwords;
    let accounts = incident.distinct_accounts;
    match language {
        En => Report {
            nature: format!(
                "{} An incident of {} that lasted {} minute(s) and closed by itself after 30 quiet minutes.",
                verdict(language, classification, figures),
                kind(language, incident.kind),
                incident.minutes
            ),
            data_and_people: if exposed == 0 {
                format!(
                    "No account was entered and no personal data was disclosed. {accounts} account(s) were aimed \
                     at; their passwords stayed unknown to the attacker."
                )
            } else {
                format!(
                    "The passwords of {exposed} account(s) were known to the attacker; sign-in with them was \
                     refused, so no account was entered and no data disclosed through this service."
                )
            },
            risks: if exposed > 0 {
                "The exposed passwords may be used elsewhere: their owners should change them wherever they \
                 reuse them. Risk to people: moderate until they do."
                    .into()
            } else if attack {
                "Low: the attacker learnt nothing, and the same sources are refused if they come back.".into()
            } else {
                "Low: no sign of an attacker.".into()
            },
            measures: what_was_done(language, incident, figures),
            communication: if exposed > 0 {
                "Each affected owner was told by e-mail to choose a new password. Where the law requires it, \
                 report the exposure to the data protection authority within 72 hours of learning of it."
                    .into()
            } else {
                "No message to the people concerned is needed: no personal data was disclosed.".into()
            },
        },
        Fr => Report {
            nature: format!(
                "{} Incident de type {} d'une durée de {} minute(s), clos de lui-même après 30 minutes de calme.",
                verdict(language, classification, figures),
                kind(language, incident.kind),
                incident.minutes
            ),
            data_and_people: if exposed == 0 {
                format!(
                    "Aucun compte n'a été pénétré et aucune donnée personnelle divulguée. {accounts} compte(s) \
                     visé(s) ; leurs mots de passe sont restés inconnus de l'attaquant."
                )
            } else {
                format!(
                    "Les mots de passe de {exposed} compte(s) étaient connus de l'attaquant ; la connexion a été \
                     refusée, aucun compte n'a donc été pénétré par ce service."
                )
            },
            risks: if exposed > 0 {
                "Les mots de passe exposés peuvent servir ailleurs : leurs titulaires doivent les changer partout \
                 où ils les réutilisent. Risque modéré tant qu'ils ne l'ont pas fait."
                    .into()
            } else if attack {
                "Faible : l'attaquant n'a rien appris, et les mêmes sources sont refusées si elles reviennent.".into()
            } else {
                "Faible : aucun signe d'attaquant.".into()
            },
            measures: what_was_done(language, incident, figures),
            communication: if exposed > 0 {
                "Chaque titulaire concerné a été prévenu par e-mail de choisir un nouveau mot de passe. Lorsque la \
                 loi l'exige, notifiez l'autorité de protection des données dans les 72 heures."
                    .into()
            } else {
                "Aucun message aux personnes concernées n'est nécessaire : aucune donnée personnelle divulguée.".into()
            },
        },
    }
}
