//! Rule `openvox9-compat` (group 2): what the environment relies on that OpenVox 9 no longer
//! reads, so that a migration is checked before it happens.
//!
//! Read from OpenVox's source after the 8.x branch (the 9 series: pull request #385, "Remove
//! data-binding settings"; `lib/puppet/pops/lookup/lookup_adapter.rb` and
//! `lib/puppet/settings/environment_conf.rb` there): `LookupAdapter#initialize_env_provider`
//! makes the environment layer from its hiera.yaml alone, `environment_data_provider` is no
//! longer a valid environment.conf setting (ignored with a warning), `lookup_global` always
//! asks Hiera (the `data_binding_terminus` setting and the data_binding indirection with its
//! `hiera` terminus are gone). A module's metadata.json `data_provider` is still read there,
//! so it is not flagged.

use super::repo::Repo;
use super::Sink;
use hiera_engine::environment::EnvironmentConf;
use std::path::Path;

const RULE: &str = "openvox9-compat";

pub(crate) fn check(repo: &Repo, puppet_conf: Option<&Path>, sink: &mut Sink) {
    environment_conf(repo, sink);
    if let Some(p) = puppet_conf {
        puppet_conf_settings(repo, p, sink);
    }
    data_binding_termini(repo, sink);
}

/// The hiera.yaml version of the environment, if it has one that loads.
fn environment_hiera_version(repo: &Repo) -> Option<u32> {
    repo.layers
        .iter()
        .find(|l| l.kind == hiera_engine::config::Layer::Environment && l.hiera_yaml.is_some())
        .and_then(|l| l.config.as_ref())
        .map(|c| c.version)
}

/// What OpenVox 9 does instead of honouring `environment_data_provider = value` in an
/// environment whose hiera.yaml has version `hiera` (if any).
fn instead(value: &str, hiera: Option<u32>) -> String {
    match (value, hiera) {
        (_, Some(v)) if v >= 5 => {
            "Puppet 8 already ignores it (the environment's hiera.yaml is version 5): remove the line".into()
        }
        ("hiera", None) => {
            "the environment's data/common.yaml, which Puppet 8 reads through its default hierarchy, is not read there: add a version 5 hiera.yaml (hierarchy: [{name: Common, path: common.yaml}])".into()
        }
        ("function", _) => {
            "environment::data() is not called there: move its data into data files under a version 5 hiera.yaml".into()
        }
        ("none", Some(v)) => format!(
            "the version {v} hiera.yaml this setting hides from Puppet 8 is read there: remove it, or the line"
        ),
        ("hiera", Some(v)) => format!(
            "the version {v} hiera.yaml is read there as it is now: convert it to version 5 and remove the line"
        ),
        _ => "remove the line".into(),
    }
}

fn environment_conf(repo: &Repo, sink: &mut Sink) {
    let path = repo.root.join("environment.conf");
    let Ok(text) = repo.fs.read_text(&path) else {
        return;
    };
    let conf = EnvironmentConf::parse(&text);
    let Some(value) = conf.setting("environment_data_provider") else {
        return;
    };
    let pos = setting_pos(&text, "environment_data_provider").unwrap_or((1, 1));
    sink.add(
        &path,
        pos,
        RULE,
        format!(
            "environment_data_provider = {value}: OpenVox 9 no longer reads this setting (it warns of an unknown setting and ignores it); {}",
            instead(value, environment_hiera_version(repo))
        ),
    );
}

/// `data_binding_terminus` and `environment_data_provider` in any section of puppet.conf.
fn puppet_conf_settings(repo: &Repo, path: &Path, sink: &mut Sink) {
    let Ok(text) = hiera_value::limits::read_text(path) else {
        return;
    };
    let mut section = "main".to_string();
    for (i, line) in text.lines().enumerate() {
        let body = line.trim();
        if let Some(name) = body.strip_prefix('[').and_then(|b| b.strip_suffix(']')) {
            section = name.trim().to_string();
            continue;
        }
        let Some((k, v)) = body.split_once('=') else {
            continue;
        };
        let (k, v) = (k.trim(), hiera_engine::environment::settings_value(v));
        let column = line.len() - line.trim_start().len() + 1;
        let message = match k {
            "data_binding_terminus" => {
                let effect = match v.as_str() {
                    "none" | "" => "the global hiera.yaml this setting turns off is read there",
                    "hiera" => "the global layer is Hiera's there as it is now: remove the line",
                    _ => "a custom data_binding terminus is never asked there: move its data to Hiera 5 (a data_hash or lookup_key function)",
                };
                format!(
                    "data_binding_terminus = {v} in [{section}]: OpenVox 9 removed this setting and the data_binding indirection with its hiera terminus; {effect}"
                )
            }
            "environment_data_provider" => format!(
                "environment_data_provider = {v} in [{section}]: OpenVox 9 removed this setting; {}",
                instead(&v, environment_hiera_version(repo))
            ),
            _ => continue,
        };
        sink.add(path, (i + 1, column), RULE, message);
    }
}

/// Modules that ship a data_binding terminus (`lib/puppet/indirector/data_binding/*.rb`).
fn data_binding_termini(repo: &Repo, sink: &mut Sink) {
    for (name, dir) in &repo.modules {
        let termini = dir.join("lib/puppet/indirector/data_binding");
        let Ok(mut files) = repo.fs.read_dir(&termini) else {
            continue;
        };
        files.sort();
        for f in files.iter().filter(|f| f.ends_with(".rb")) {
            sink.add(
                &termini.join(f),
                (1, 1),
                RULE,
                format!(
                    "module {name} ships the data_binding terminus {}: OpenVox 9 removed the data_binding indirection, so it is never loaded there; serve its data as a Hiera 5 backend function instead",
                    f.trim_end_matches(".rb")
                ),
            );
        }
    }
}

/// Line and column of the `name = …` setting line.
fn setting_pos(text: &str, name: &str) -> Option<(usize, usize)> {
    text.lines().enumerate().find_map(|(i, line)| {
        let body = line.trim_start();
        let (k, _) = body.split_once('=')?;
        (k.trim() == name).then(|| (i + 1, line.len() - body.len() + 1))
    })
}
