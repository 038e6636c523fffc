//! The words of the sign-in pages, in each language they are written in, and the choice of a
//! language for a request: its `ui_locales`, else the browser's `Accept-Language`.

/// A language the pages are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    English,
    French,
}

/// The words of the pages in one language.
#[derive(Debug)]
pub struct Texts {
    /// The `lang` of the page.
    pub tag: &'static str,
    /// "Sign in to", followed by the client's name.
    pub sign_in_to: &'static str,
    pub username: &'static str,
    pub password: &'static str,
    pub sign_in: &'static str,
    /// "Sign in with", followed by an identity provider's name.
    pub sign_in_with: &'static str,
    pub upstream_failed: &'static str,
    pub account_not_linked: &'static str,
    pub sign_in_lost_title: &'static str,
    /// The title of the page that goes on to the application.
    pub signing_in: &'static str,
    pub sign_in_lost: &'static str,
    pub wrong_credentials: &'static str,
    pub too_many_attempts: &'static str,
    pub locked_out: &'static str,
    pub disabled: &'static str,
    pub change_password: &'static str,
    pub sign_out_question: &'static str,
    pub sign_out: &'static str,
    pub signed_out: &'static str,
    pub close_window: &'static str,
    pub choose_password: &'static str,
    pub new_password: &'static str,
    pub save_password: &'static str,
    pub password_length: &'static str,
    pub password_breached: &'static str,
    pub password_changed: &'static str,
    pub took_too_long: &'static str,
    pub confirm_on_phone: &'static str,
    /// The title of the second step, asking for a code from an authenticator app.
    pub second_factor_title: &'static str,
    pub second_factor_asked: &'static str,
    pub one_time_code: &'static str,
    pub verify: &'static str,
    pub wrong_code: &'static str,
    pub code_expired: &'static str,
    pub phone_asked: &'static str,
    pub continue_on: &'static str,
    pub phone_refused: &'static str,
    pub phone_expired: &'static str,
    pub forgot_password: &'static str,
    pub reset_password: &'static str,
    pub reset_asked: &'static str,
    pub send_code: &'static str,
    pub code_sent: &'static str,
    pub reset_code: &'static str,
    pub code_invalid: &'static str,
    pub back_to_sign_in: &'static str,
    pub create_account: &'static str,
    /// "Create your account for", followed by the client's name.
    pub create_account_for: &'static str,
    pub new_username: &'static str,
    pub email: &'static str,
    /// After a sign-up: the page that takes the code sent to the address.
    pub confirm_email: &'static str,
    pub confirm_email_sent: &'static str,
    pub confirmation_code: &'static str,
    pub finish_sign_up: &'static str,
    /// The code came back, but another account took the username or the address meanwhile.
    pub sign_up_taken: &'static str,
    pub username_invalid: &'static str,
    pub email_invalid: &'static str,
    pub password_set: &'static str,
    pub form_expired: &'static str,
    /// "asks for access to your account", after the client's name.
    pub consent_asks: &'static str,
    /// Followed by the client's host: where a third-party application is served from.
    pub consent_served_from: &'static str,
    pub consent_not_operated: &'static str,
    /// Followed by the resource server's address.
    pub consent_for_resource: &'static str,
    /// Before the list of what is newly asked.
    pub consent_new: &'static str,
    /// Before the list of what was allowed earlier.
    pub consent_earlier: &'static str,
    /// Followed by the username of the person the consent page asks.
    pub signed_in_as: &'static str,
    /// The consent page's way to sign in as someone else.
    pub not_you: &'static str,
    /// What the standard OpenID Connect scopes give, in the page's language.
    pub scope_openid: &'static str,
    pub scope_profile: &'static str,
    pub scope_email: &'static str,
    pub scope_offline_access: &'static str,
    pub allow: &'static str,
    pub deny: &'static str,
    /// The title of the page listing what the person allowed applications.
    pub your_applications: &'static str,
    pub no_applications: &'static str,
    /// Followed by the day: when the person first allowed an application (telling apart two of
    /// the same name).
    pub first_allowed: &'static str,
    pub withdraw: &'static str,
    pub withdrawn: &'static str,
    pub not_signed_in: &'static str,
    pub sign_in_first: &'static str,
    /// Passkeys: on the login page, and on the page of a person's sign-in methods.
    pub sign_in_with_passkey: &'static str,
    pub sign_up_with_passkey: &'static str,
    pub passkey_failed: &'static str,
    pub passkey_refused: &'static str,
    pub sign_in_methods: &'static str,
    pub no_sign_in_methods: &'static str,
    pub add_passkey: &'static str,
    pub passkey_name: &'static str,
    pub passkey_added: &'static str,
    pub passkey_not_added: &'static str,
    pub added_on: &'static str,
    pub last_used: &'static str,
    pub remove: &'static str,
    pub removed: &'static str,
    pub sign_in_again_to_change: &'static str,
    /// Enrolling an authenticator app on the page of sign-in methods.
    pub add_app: &'static str,
    pub scan_app: &'static str,
    pub app_secret: &'static str,
    pub app_code: &'static str,
    pub app_name: &'static str,
    pub keep_app: &'static str,
    pub app_added: &'static str,
    pub app_not_added: &'static str,
    pub recovery_codes_once: &'static str,
    /// The second step of a person whose factor is a passkey, and its way to a phone instead.
    pub passkey_asked: &'static str,
    pub confirm_with_phone: &'static str,
    /// The step that has a person add a second factor before their sign-in ends.
    pub enrol_title: &'static str,
    pub enrol_asked: &'static str,
    pub enrol_passkey_asked: &'static str,
    pub recovery_codes_title: &'static str,
    /// On the login page of a request asking for more than a password.
    pub stronger_sign_in: &'static str,
    pub stronger_sign_in_passkey: &'static str,
    /// The page where a person types the code a device shows (RFC 8628).
    pub device_title: &'static str,
    pub device_intro: &'static str,
    pub user_code: &'static str,
    pub next: &'static str,
    pub user_code_unknown: &'static str,
    /// On the consent page of a device's request.
    pub consent_device: &'static str,
    pub device_approved_title: &'static str,
    pub device_approved: &'static str,
    pub device_denied_title: &'static str,
    pub device_denied: &'static str,
    pub device_gone: &'static str,
}

impl Texts {
    /// The page's words for a standard OpenID Connect scope, if `scope` is one.
    pub fn standard_scope(&self, scope: &str) -> Option<&'static str> {
        match scope {
            "openid" => Some(self.scope_openid),
            "profile" => Some(self.scope_profile),
            "email" => Some(self.scope_email),
            "offline_access" => Some(self.scope_offline_access),
            _ => None,
        }
    }
}

const ENGLISH: Texts = Texts {
    tag: "en",
    sign_in_to: "Sign in to",
    username: "Username or email",
    password: "Password",
    sign_in: "Sign in",
    sign_in_with: "Sign in with",
    upstream_failed: "Signing in through that provider did not succeed. Try again, or sign in another way.",
    account_not_linked: "An account with this e-mail address exists already. Sign in to it another way.",
    sign_in_lost_title: "This sign-in has expired",
    signing_in: "Signing you in…",
    sign_in_lost: "Go back to the application and start signing in again.",
    wrong_credentials: "The username or password is not correct.",
    too_many_attempts: "Too many sign-in attempts. Wait a few minutes, then try again.",
    locked_out: "Too many failed sign-ins. Try again later.",
    disabled: "This account is disabled.",
    change_password: "Your password must be changed before you can sign in. Use password recovery to set a new one.",
    sign_out_question: "Sign out?",
    sign_out: "Sign out",
    signed_out: "You are signed out",
    close_window: "You can close this window.",
    choose_password: "Choose a new password",
    new_password: "New password",
    save_password: "Save the password",
    password_length: "The password is too short or too long for this service.",
    password_breached: "This password appears in a list of breached passwords. Choose another.",
    password_changed: "Your password was changed. Sign in with the new one.",
    took_too_long: "That took too long. Sign in again.",
    confirm_on_phone: "Confirm on your phone",
    second_factor_title: "Enter your code",
    second_factor_asked: "Open your authenticator app and type the code it shows, or one of your recovery codes.",
    one_time_code: "Code",
    verify: "Verify",
    wrong_code: "That code is not right. Type the code your app shows now.",
    code_expired: "The sign-in waited too long for its code. Sign in again.",
    phone_asked: "A sign-in request was sent to your phone. Approve it there; this page goes on by itself.",
    continue_on: "Continue",
    phone_refused: "The sign-in was refused on the phone.",
    phone_expired: "The phone did not answer in time. Sign in again.",
    forgot_password: "Forgot your password?",
    reset_password: "Reset your password",
    reset_asked: "Type your username or email. If the account has an email address, a code is sent to it.",
    send_code: "Send the code",
    code_sent: "If the account exists and has an email address, a code is on its way. Type it here with your new \
                password.",
    reset_code: "Code from the email",
    code_invalid: "This code is not valid or has expired.",
    back_to_sign_in: "Back to sign in",
    create_account: "Create an account",
    create_account_for: "Create your account for",
    new_username: "Username",
    email: "Email",
    confirm_email: "Confirm your email address",
    confirm_email_sent: "An email is on its way to the address you gave. If the account can be created, it \
                         holds a code: type it here within 30 minutes to finish. Otherwise it says why.",
    confirmation_code: "Code from the email",
    finish_sign_up: "Create my account",
    sign_up_taken: "Another account took this username or address meanwhile. Start again.",
    username_invalid: "A username has no spaces, no @ and at most 255 characters.",
    email_invalid: "This is not an email address.",
    password_set: "Your password is set. You can now sign in.",
    form_expired: "This form has expired. Try again.",
    consent_asks: "asks for access to your account",
    consent_served_from: "This application is served from",
    consent_not_operated: "It registered itself: the operator of this sign-in service does not vouch for it.",
    consent_for_resource: "For use at",
    consent_new: "It asks for:",
    consent_earlier: "You allowed it earlier:",
    signed_in_as: "You are signed in as",
    not_you: "Not you? Sign in as someone else",
    scope_openid: "Your identity on this service",
    scope_profile: "Your name and profile",
    scope_email: "Your email address",
    scope_offline_access: "Access while you are away",
    allow: "Allow",
    deny: "Deny",
    your_applications: "Applications you allowed",
    no_applications: "You have allowed no application.",
    first_allowed: "allowed since",
    withdraw: "Withdraw access",
    withdrawn: "Access withdrawn: the application is signed out and must ask you again.",
    not_signed_in: "You are not signed in",
    sign_in_first: "Sign in to one of this service's applications, then come back to this page.",
    sign_in_with_passkey: "Sign in with a passkey",
    sign_up_with_passkey: "Create my account with a passkey instead",
    passkey_failed: "No passkey was used. Try again, or sign in with your password.",
    passkey_refused: "This passkey was not accepted. Try again, or sign in with your password.",
    sign_in_methods: "Your sign-in methods",
    no_sign_in_methods: "You have no passkey or authenticator app yet.",
    add_passkey: "Add a passkey",
    passkey_name: "Name of the new passkey (optional)",
    passkey_added: "Passkey added: you can sign in with it.",
    passkey_not_added: "The passkey was not added. Try again.",
    added_on: "Added",
    last_used: "last used",
    remove: "Remove",
    removed: "Removed.",
    sign_in_again_to_change: "You signed in a while ago: sign in again before you change your sign-in methods.",
    add_app: "Add an authenticator app",
    scan_app: "Scan this code with your authenticator app, or type the key below into it. Then type the code it shows.",
    app_secret: "Key",
    app_code: "Code the app shows",
    app_name: "Name of the app (optional)",
    keep_app: "Keep this app",
    app_added: "Authenticator app added: your sign-ins will ask for its code.",
    app_not_added: "That code is not the one the app shows now, or the enrolment has expired. Try again.",
    recovery_codes_once: "Your recovery codes, shown this once. Keep them somewhere safe: each signs you in once when your app is out of reach.",
    passkey_asked: "Use your passkey to finish signing in.",
    confirm_with_phone: "Confirm on my phone",
    enrol_title: "Add a second factor",
    enrol_asked: "Every sign-in here asks for a second factor: add a passkey or an authenticator app to go on.",
    enrol_passkey_asked: "Every sign-in here asks for a passkey: add one to go on.",
    recovery_codes_title: "Keep your recovery codes",
    stronger_sign_in: "This application asks for a stronger sign-in: a passkey, or your password with a second factor.",
    stronger_sign_in_passkey: "This application asks for a stronger sign-in: sign in with a passkey.",
    device_title: "Connect a device",
    device_intro: "Type the code your device shows. Only type a code from a device you are using yourself.",
    user_code: "Code",
    next: "Continue",
    user_code_unknown: "This code is not known or has expired. Check it on your device, or start again there.",
    consent_device: "A device you are connecting asks for this access. Allow it only if you started this yourself.",
    device_approved_title: "Your device is connected",
    device_approved: "You may go back to your device: it is signed in.",
    device_denied_title: "Access denied",
    device_denied: "Your device was refused. You may close this window.",
    device_gone: "This request has expired or was already answered. Start again on your device.",
};

const FRENCH: Texts = Texts {
    tag: "fr",
    sign_in_to: "Connexion à",
    username: "Nom d’utilisateur ou adresse e-mail",
    password: "Mot de passe",
    sign_in: "Se connecter",
    sign_in_with: "Se connecter avec",
    upstream_failed: "La connexion par ce fournisseur n’a pas abouti. Réessayez, ou connectez-vous autrement.",
    account_not_linked: "Un compte existe déjà avec cette adresse e-mail. Connectez-vous à ce compte autrement.",
    sign_in_lost_title: "Cette connexion a expiré",
    signing_in: "Connexion en cours…",
    sign_in_lost: "Revenez à l’application et recommencez la connexion.",
    wrong_credentials: "Le nom d’utilisateur ou le mot de passe est incorrect.",
    too_many_attempts: "Trop de tentatives de connexion. Patientez quelques minutes, puis réessayez.",
    locked_out: "Trop d’échecs de connexion. Réessayez plus tard.",
    disabled: "Ce compte est désactivé.",
    change_password: "Votre mot de passe doit être changé avant de vous connecter. Utilisez la récupération du mot \
                      de passe pour en choisir un nouveau.",
    sign_out_question: "Se déconnecter ?",
    sign_out: "Se déconnecter",
    signed_out: "Vous êtes déconnecté",
    close_window: "Vous pouvez fermer cette fenêtre.",
    choose_password: "Choisissez un nouveau mot de passe",
    new_password: "Nouveau mot de passe",
    save_password: "Enregistrer le mot de passe",
    password_length: "Le mot de passe est trop court ou trop long pour ce service.",
    password_breached: "Ce mot de passe figure dans une liste de mots de passe divulgués. Choisissez-en un autre.",
    password_changed: "Votre mot de passe a été changé. Connectez-vous avec le nouveau.",
    took_too_long: "Le délai est dépassé. Connectez-vous à nouveau.",
    confirm_on_phone: "Confirmez sur votre téléphone",
    second_factor_title: "Saisissez votre code",
    second_factor_asked: "Ouvrez votre application d’authentification et saisissez le code qu’elle affiche, ou l’un de vos codes de récupération.",
    one_time_code: "Code",
    verify: "Vérifier",
    wrong_code: "Ce code n’est pas le bon. Saisissez le code que votre application affiche maintenant.",
    code_expired: "La connexion a trop attendu son code. Connectez-vous à nouveau.",
    phone_asked: "Une demande de connexion a été envoyée à votre téléphone. Acceptez-la ; cette page continue \
                  d’elle-même.",
    continue_on: "Continuer",
    phone_refused: "La connexion a été refusée sur le téléphone.",
    phone_expired: "Le téléphone n’a pas répondu à temps. Connectez-vous à nouveau.",
    forgot_password: "Mot de passe oublié ?",
    reset_password: "Réinitialiser le mot de passe",
    reset_asked: "Saisissez votre nom d’utilisateur ou votre adresse e-mail. Si le compte a une adresse e-mail, un \
                  code y est envoyé.",
    send_code: "Envoyer le code",
    code_sent: "Si le compte existe et a une adresse e-mail, un code est en route. Saisissez-le ici avec votre \
                nouveau mot de passe.",
    reset_code: "Code reçu par e-mail",
    code_invalid: "Ce code n’est pas valide ou a expiré.",
    back_to_sign_in: "Retour à la connexion",
    create_account: "Créer un compte",
    create_account_for: "Créez votre compte pour",
    new_username: "Nom d’utilisateur",
    email: "Adresse e-mail",
    confirm_email: "Confirmez votre adresse e-mail",
    confirm_email_sent: "Un e-mail est en route vers l’adresse indiquée. Si le compte peut être créé, il contient \
                         un code : saisissez-le ici dans les 30 minutes pour terminer. Sinon, il en dit la raison.",
    confirmation_code: "Code reçu par e-mail",
    finish_sign_up: "Créer mon compte",
    sign_up_taken: "Un autre compte a pris ce nom d’utilisateur ou cette adresse entre-temps. Recommencez.",
    username_invalid: "Un nom d’utilisateur n’a ni espace ni @ et au plus 255 caractères.",
    email_invalid: "Ce n’est pas une adresse e-mail.",
    password_set: "Votre mot de passe est enregistré. Vous pouvez maintenant vous connecter.",
    form_expired: "Ce formulaire a expiré. Réessayez.",
    consent_asks: "demande l’accès à votre compte",
    consent_served_from: "Cette application est servie depuis",
    consent_not_operated: "Elle s’est enregistrée elle-même : l’opérateur de ce service de connexion ne s’en porte \
                           pas garant.",
    consent_for_resource: "Pour un usage auprès de",
    consent_new: "Elle demande :",
    consent_earlier: "Vous lui avez déjà permis :",
    signed_in_as: "Vous êtes connecté en tant que",
    not_you: "Ce n’est pas vous ? Connectez-vous avec un autre compte",
    scope_openid: "Votre identité sur ce service",
    scope_profile: "Votre nom et votre profil",
    scope_email: "Votre adresse e-mail",
    scope_offline_access: "Un accès en votre absence",
    allow: "Autoriser",
    deny: "Refuser",
    your_applications: "Applications que vous avez autorisées",
    no_applications: "Vous n’avez autorisé aucune application.",
    first_allowed: "autorisée depuis le",
    withdraw: "Retirer l’accès",
    withdrawn: "Accès retiré : l’application est déconnectée et devra vous redemander.",
    not_signed_in: "Vous n’êtes pas connecté",
    sign_in_first: "Connectez-vous à l’une des applications de ce service, puis revenez sur cette page.",
    sign_in_with_passkey: "Se connecter avec une clé d’accès",
    sign_up_with_passkey: "Créer plutôt mon compte avec une clé d’accès",
    passkey_failed: "Aucune clé d’accès n’a été utilisée. Réessayez, ou connectez-vous avec votre mot de passe.",
    passkey_refused: "Cette clé d’accès n’a pas été acceptée. Réessayez, ou connectez-vous avec votre mot de passe.",
    sign_in_methods: "Vos méthodes de connexion",
    no_sign_in_methods: "Vous n’avez encore ni clé d’accès ni application d’authentification.",
    add_passkey: "Ajouter une clé d’accès",
    passkey_name: "Nom de la nouvelle clé d’accès (facultatif)",
    passkey_added: "Clé d’accès ajoutée : vous pouvez vous connecter avec.",
    passkey_not_added: "La clé d’accès n’a pas été ajoutée. Réessayez.",
    added_on: "Ajoutée le",
    last_used: "dernière utilisation le",
    remove: "Supprimer",
    removed: "Supprimée.",
    sign_in_again_to_change: "Vous vous êtes connecté il y a un moment : reconnectez-vous avant de modifier vos méthodes de \
                              connexion.",
    add_app: "Ajouter une application d’authentification",
    scan_app: "Scannez ce code avec votre application d’authentification, ou saisissez-y la clé ci-dessous. Puis \
               saisissez le code qu’elle affiche.",
    app_secret: "Clé",
    app_code: "Code affiché par l’application",
    app_name: "Nom de l’application (facultatif)",
    keep_app: "Garder cette application",
    app_added: "Application d’authentification ajoutée : vos connexions demanderont son code.",
    app_not_added: "Ce code n’est pas celui que l’application affiche, ou l’ajout a expiré. Réessayez.",
    recovery_codes_once: "Vos codes de secours, affichés cette seule fois. Gardez-les en lieu sûr : chacun vous connecte \
                          une fois quand votre application est hors de portée.",
    passkey_asked: "Utilisez votre clé d’accès pour terminer la connexion.",
    confirm_with_phone: "Confirmer sur mon téléphone",
    enrol_title: "Ajoutez un second facteur",
    enrol_asked: "Chaque connexion ici demande un second facteur : ajoutez une clé d’accès ou une application \
                  d’authentification pour continuer.",
    enrol_passkey_asked: "Chaque connexion ici demande une clé d’accès : ajoutez-en une pour continuer.",
    recovery_codes_title: "Gardez vos codes de secours",
    stronger_sign_in: "Cette application demande une connexion renforcée : une clé d’accès, ou votre mot de passe \
                       avec un second facteur.",
    stronger_sign_in_passkey: "Cette application demande une connexion renforcée : connectez-vous avec une clé d’accès.",
    device_title: "Connecter un appareil",
    device_intro: "Saisissez le code affiché par votre appareil. Ne saisissez que le code d’un appareil que vous \
                   utilisez vous-même.",
    user_code: "Code",
    next: "Continuer",
    user_code_unknown: "Ce code est inconnu ou a expiré. Vérifiez-le sur votre appareil, ou recommencez depuis celui-ci.",
    consent_device: "Un appareil que vous connectez demande cet accès. Ne l’autorisez que si vous en êtes à l’origine.",
    device_approved_title: "Votre appareil est connecté",
    device_approved: "Vous pouvez revenir à votre appareil : il est connecté.",
    device_denied_title: "Accès refusé",
    device_denied: "Votre appareil a été refusé. Vous pouvez fermer cette fenêtre.",
    device_gone: "Cette demande a expiré ou a déjà reçu une réponse. Recommencez depuis votre appareil.",
};

/// The languages the pages are written in, as `ui_locales_supported` names them.
pub const SUPPORTED: [&str; 2] = ["en", "fr"];

impl Language {
    /// The first language of `ui_locales` (OIDC Core §3.1.2.1: space-separated, in order of
    /// preference) the pages are written in, else the browser's most preferred of
    /// `Accept-Language`, else English.
    pub fn choose(ui_locales: Option<&str>, accept_language: Option<&str>) -> Self {
        let from_ui = ui_locales.and_then(|text| text.split(' ').find_map(Self::of_tag));
        from_ui.or_else(|| accept_language.and_then(Self::preferred)).unwrap_or(Self::English)
    }

    fn of_tag(tag: &str) -> Option<Self> {
        let primary = tag.split(['-', '_']).next()?.trim();
        if primary.eq_ignore_ascii_case("en") {
            Some(Self::English)
        } else if primary.eq_ignore_ascii_case("fr") {
            Some(Self::French)
        } else {
            None
        }
    }

    /// RFC 9110 §12.5.4: the supported language of the highest weight, the first named on a tie.
    fn preferred(header: &str) -> Option<Self> {
        let mut best: Option<(Self, f32)> = None;
        for item in header.split(',').take(32) {
            let mut parts = item.split(';');
            let Some(language) = parts.next().and_then(Self::of_tag) else { continue };
            let weight = parts
                .find_map(|p| p.trim().strip_prefix("q=").and_then(|q| q.trim().parse::<f32>().ok()))
                .unwrap_or(1.0);
            if weight > 0.0 && best.is_none_or(|(_, w)| weight > w) {
                best = Some((language, weight));
            }
        }
        best.map(|(language, _)| language)
    }

    pub fn texts(self) -> &'static Texts {
        match self {
            Self::English => &ENGLISH,
            Self::French => &FRENCH,
        }
    }

    /// The English words, for pages shown before any request is known.
    pub fn english() -> &'static Texts {
        &ENGLISH
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_language_is_the_first_supported_of_ui_locales_then_the_browsers_preferred() {
        assert_eq!(Language::choose(Some("de-CH fr-CA en"), Some("en")), Language::French);
        assert_eq!(Language::choose(Some("de"), Some("de;q=1, fr;q=0.8, en;q=0.5")), Language::French);
        assert_eq!(Language::choose(None, Some("en-GB;q=0.4, fr-FR;q=0.9")), Language::French);
        assert_eq!(Language::choose(None, Some("fr;q=0, en;q=0.1")), Language::English);
        assert_eq!(Language::choose(None, Some("de")), Language::English);
        assert_eq!(Language::choose(None, None), Language::English);
    }
}
