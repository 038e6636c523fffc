//! The `castellan` command: `serve`, `migrate`, `policies check`, `policies export`, `plugins test`,
//! `instance open-admin-networks`, `team password-link`.

use std::path::PathBuf;
use std::process::ExitCode;

use castellan::authz::{PolicyFiles, fixtures};
use castellan::kernel::clock::{Clock as _, SystemClock};
use castellan::kernel::config::{Overrides, Settings};
use castellan::{Application, store};
use clap::{Parser, Subcommand};

// Request handling allocates many small short-lived values across threads; mimalloc serves that
// pattern markedly faster than the system allocator (see BENCHMARKS.md). It is built not to ask
// for transparent huge pages (`no_thp`): each of its arenas would otherwise hold 2 MiB pages that
// are resident in full, 20 MB of an idle service's memory for no measurable speed.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Debug, Parser)]
#[command(name = "castellan", version, about = "Multi-tenant identity and access service")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the service (migrates the database and bootstraps an empty one first).
    Serve {
        #[command(flatten)]
        overrides: Overrides,
        /// Folder of the Cedar schema, policies and fixtures; without it, the policies built into
        /// the binary (`policies export` writes them out).
        #[arg(long, env = "CASTELLAN_POLICIES")]
        policies: Option<PathBuf>,
    },
    /// Apply pending database migrations and exit.
    Migrate {
        #[command(flatten)]
        overrides: Overrides,
    },
    /// Work with the permission policies.
    Policies {
        #[command(subcommand)]
        command: PoliciesCommand,
    },
    /// Work with the sandboxed components.
    Plugins {
        #[command(subcommand)]
        command: PluginsCommand,
    },
    /// Work with what accounts set on this deployment.
    Instance {
        #[command(subcommand)]
        command: InstanceCommand,
    },
    /// Work with the people of the accounts' teams.
    Team {
        #[command(subcommand)]
        command: TeamCommand,
    },
}

#[derive(Debug, Subcommand)]
enum TeamCommand {
    /// Print a one-time link (good for 24 hours) where a member of a team chooses a new password:
    /// the way back in for a member whom no e-mail reaches. No API credential can do this.
    PasswordLink {
        #[command(flatten)]
        overrides: Overrides,
        /// The member's username (or e-mail address) in the platform realm.
        #[arg(long)]
        username: String,
    },
}

#[derive(Debug, Subcommand)]
enum InstanceCommand {
    /// Empty the admin networks of an account (of every account without --account), so that its
    /// API keys and console work from anywhere again: the way back in for an account whose
    /// allowed addresses are no longer its own.
    OpenAdminNetworks {
        #[command(flatten)]
        overrides: Overrides,
        /// The account's id.
        #[arg(long)]
        account: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
enum PluginsCommand {
    /// Replay a file against a component and print what it answers (`embedded` names the component
    /// the service ships with): a scenario of timed attempts (`"attempts"`) against a detector, on a
    /// manual clock; an incident's figures (`"measures"`) against an analyst, in every language.
    Test { component: PathBuf, scenario: PathBuf },
}

#[derive(Debug, Subcommand)]
enum PoliciesCommand {
    /// Validate the policies against the schema, run the fixtures, print the role × permission
    /// matrix: those of DIR, or without it the policies built into the binary.
    Check { dir: Option<PathBuf> },
    /// Write the policies built into the binary (schema, policies, fixtures) into DIR, a new or
    /// empty folder, to audit or change them and serve with `--policies DIR`.
    Export { dir: PathBuf },
}

/// The policies of `dir`, or those built into the binary.
fn policy_files(dir: Option<&std::path::Path>) -> anyhow::Result<PolicyFiles> {
    Ok(match dir {
        Some(dir) => PolicyFiles::read(dir)?,
        None => PolicyFiles::shipped(),
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve { overrides, policies } => {
            let settings = Settings::load(&overrides)?;
            // Kept until the service stops; dropping it writes the log and sends the spans it holds.
            let _logging = castellan::runtime::telemetry::init_logging(&settings)?;
            serve(settings, policies).await
        }
        Command::Migrate { overrides } => {
            let settings = Settings::load(&overrides)?;
            let _logging = castellan::runtime::telemetry::init_logging(&settings)?;
            let store = store::Store::connect(&settings.database_url, 1).await?;
            store.migrate().await?;
            println!("migrations applied");
            Ok(())
        }
        Command::Policies { command: PoliciesCommand::Check { dir } } => {
            print!("{}", fixtures::check(&policy_files(dir.as_deref())?)?);
            Ok(())
        }
        Command::Policies { command: PoliciesCommand::Export { dir } } => {
            print!("{}", PolicyFiles::shipped().export(&dir)?);
            Ok(())
        }
        Command::Plugins { command: PluginsCommand::Test { component, scenario } } => {
            test_component(&component, &scenario).await
        }
        Command::Team { command: TeamCommand::PasswordLink { overrides, username } } => {
            let settings = Settings::load(&overrides)?;
            let store = store::Store::connect(&settings.database_url, 1).await?;
            let (hasher, _) = castellan::kernel::crypto::SecretHasher::load_or_create(&settings.secret_key_file)?;
            let Some(made) =
                castellan::application::bootstrap::password_link(&store, &hasher, &username, SystemClock.now()).await?
            else {
                anyhow::bail!("no member of a team has the username or address {username}");
            };
            let base = settings
                .public_url
                .as_deref()
                .map_or_else(|| format!("http://{}", settings.listen), |url| url.trim_end_matches('/').to_owned());
            println!(
                "{username} (account {}) chooses a new password within {} hours at:\n\n    {base}/realms/platform/account/password?code={}\n",
                made.account_id,
                castellan::application::bootstrap::OWNER_CODE_HOURS,
                made.code
            );
            Ok(())
        }
        Command::Instance { command: InstanceCommand::OpenAdminNetworks { overrides, account } } => {
            let settings = Settings::load(&overrides)?;
            let store = store::Store::connect(&settings.database_url, 1).await?;
            let account = account.map(castellan::kernel::ids::AccountId::known);
            let opened =
                castellan::operations::instance::open_admin_networks(&store, account.as_ref(), SystemClock.now())
                    .await?;
            if opened.is_empty() {
                println!("no account had admin networks to open");
            }
            for account in opened {
                println!("account {account}: admin networks emptied, its credentials work from anywhere");
            }
            Ok(())
        }
    }
}

async fn test_component(component: &std::path::Path, scenario: &std::path::Path) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let path = (component != std::path::Path::new("embedded")).then_some(component);
    let text = std::fs::read_to_string(scenario).with_context(|| format!("cannot read {}", scenario.display()))?;
    let parsed: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", scenario.display()))?;
    let lines = if parsed.get("measures").is_some() {
        let analyst = castellan::protection::analyst::component::AnalystComponent::load(path)?;
        castellan::protection::analyst::scenario::replay(&analyst, &text).await?
    } else {
        let detector = castellan::protection::detector::AttackDetector::load(path)?;
        castellan::protection::scenario::replay(&detector, &text).await?
    };
    for line in lines {
        println!("{line}");
    }
    Ok(())
}

async fn serve(settings: Settings, policies: Option<PathBuf>) -> anyhow::Result<()> {
    let (key_file, log_format) = (settings.bootstrap_key_file.clone(), settings.log_format);
    let app = Application::build(settings, &policy_files(policies.as_deref())?).await?;
    let address = app.local_addr();
    if let Some(first) = app.bootstrapped() {
        let owner_link = app.owner_link();
        let banner = castellan::application::bootstrap::Banner {
            first,
            address,
            key_file: key_file.as_deref(),
            owner_link: owner_link.as_deref(),
        };
        println!("{}", banner.render(log_format, SystemClock.now()));
    }
    app.run_until_stopped(castellan::runtime::shutdown::signal()).await
}
