//! The post-incident report of a closing reading as a document to send on: a printable HTML page,
//! and a PDF (A4, Helvetica, one column, as many pages as it takes). Both hold the same text: the
//! incident's figures, the reading's verdict, the report's five sections and the changes applied.

use maud::{DOCTYPE, PreEscaped, html};
use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref, Str};

use crate::kernel::clock::iso;
use crate::protection::analyst::AnalysisView;
use crate::protection::analyst::Language;
use crate::protection::incidents::title;
use crate::store::threats::Incident;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Html,
    Pdf,
}

/// The report's text: a title, then headed sections of paragraphs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub title: String,
    pub sections: Vec<(String, Vec<String>)>,
}

fn heading(language: Language, english: &'static str, french: &'static str) -> String {
    match language {
        Language::English => english,
        Language::French => french,
    }
    .to_owned()
}

impl Document {
    /// The document of a reading's report; `None` when the reading has none.
    pub fn of(incident: &Incident, reading: &AnalysisView, language: Language) -> Option<Self> {
        let report = reading.report.as_ref()?;
        let h = |en, fr| heading(language, en, fr);
        let closed = incident.closed_at.map(iso).unwrap_or_default();
        let words: [&str; 9] = match language {
            Language::English => [
                "in realm",
                "from",
                "to",
                "Severity",
                "detections",
                "refused attempts",
                "blocked sources",
                "protected accounts",
                "exposed passwords",
            ],
            Language::French => [
                "dans le domaine",
                "du",
                "au",
                "Gravité",
                "détections",
                "tentatives refusées",
                "sources bloquées",
                "comptes protégés",
                "mots de passe exposés",
            ],
        };
        let [realm, from, to, severity, detections, refused, blocked, protected, exposed] = words;
        let figures = format!(
            "{} {realm} {}, {from} {} {to} {closed}. {severity} {}. {} {detections}, {} {refused}, {} {blocked}, \
             {} {protected}, {} {exposed}. Incident {}.",
            title(incident.kind),
            incident.realm_id,
            iso(incident.started_at),
            incident.severity.as_str(),
            incident.detections,
            incident.refused_attempts,
            incident.blocked_sources,
            incident.protected_accounts,
            incident.exposed_passwords,
            incident.id
        );
        let verdict = format!(
            "{} ({} %). {}",
            reading.classification.as_deref().unwrap_or_default(),
            reading.confidence.unwrap_or_default(),
            reading.produced_by.as_deref().map(|by| format!("[{by}]")).unwrap_or_default()
        );
        let changes: Vec<String> = reading
            .recommendations
            .iter()
            .map(|r| {
                let state = if r.applied_action_id.is_some() {
                    h("applied", "appliqué")
                } else {
                    h("not applied", "non appliqué")
                };
                format!("{} ({}: {} → {}; {state}). {}", r.title, r.setting, r.current_value, r.value, r.noticed)
            })
            .collect();
        let mut sections = vec![
            (h("The incident", "L'incident"), vec![figures]),
            (h("Reading", "Analyse"), vec![verdict]),
            (h("Nature of the incident", "Nature de l'incident"), vec![report.nature.clone()]),
            (h("Data and people affected", "Données et personnes concernées"), vec![report.data_and_people.clone()]),
            (h("Risks", "Risques"), vec![report.risks.clone()]),
            (h("Measures", "Mesures"), vec![report.measures.clone()]),
            (h("Communication", "Communication"), vec![report.communication.clone()]),
        ];
        if !changes.is_empty() {
            sections.push((h("Recommended changes", "Changements recommandés"), changes));
        }
        Some(Self { title: h("Post-incident report", "Rapport post-incident"), sections })
    }

    /// A standalone printable page.
    pub fn html(&self) -> String {
        const STYLE: &str = "body{font:11pt/1.45 Helvetica,Arial,sans-serif;max-width:46rem;margin:2rem auto;\
                             color:#111}h1{font-size:18pt}h2{font-size:12pt;margin-top:1.4rem}\
                             @media print{body{margin:0}}";
        let page = html! {
            (DOCTYPE)
            html {
                head { meta charset="utf-8"; title { (self.title) } style { (PreEscaped(STYLE)) } }
                body {
                    h1 { (self.title) }
                    @for (heading, paragraphs) in &self.sections {
                        section { h2 { (heading) } @for paragraph in paragraphs { p { (paragraph) } } }
                    }
                }
            }
        };
        page.into_string()
    }

    /// The same text as a PDF.
    pub fn pdf(&self) -> Vec<u8> {
        const WIDTH: f32 = 595.0;
        const HEIGHT: f32 = 842.0;
        const MARGIN: f32 = 56.0;
        let mut lines: Vec<(f32, String)> = vec![(16.0, self.title.clone()), (8.0, String::new())];
        for (heading, paragraphs) in &self.sections {
            lines.push((12.0, heading.clone()));
            for paragraph in paragraphs {
                lines.extend(wrap(paragraph, 92).into_iter().map(|line| (10.0, line)));
            }
            lines.push((6.0, String::new()));
        }
        let mut pages: Vec<Vec<(f32, f32, String)>> = vec![Vec::new()];
        let mut y = HEIGHT - MARGIN;
        for (size, line) in lines {
            let advance = size * 1.45;
            if y - advance < MARGIN {
                pages.push(Vec::new());
                y = HEIGHT - MARGIN;
            }
            y -= advance;
            if let Some(page) = pages.last_mut() {
                page.push((size, y, line));
            }
        }
        let (catalog, tree, font, bold) = (Ref::new(1), Ref::new(2), Ref::new(3), Ref::new(4));
        let ids: Vec<(Ref, Ref)> =
            (0..pages.len()).map(|i| (Ref::new(5 + 2 * i as i32), Ref::new(6 + 2 * i as i32))).collect();
        let mut pdf = Pdf::new();
        pdf.catalog(catalog).pages(tree);
        pdf.pages(tree).kids(ids.iter().map(|(page, _)| *page)).count(ids.len() as i32);
        for (name, id) in [(&b"Helvetica"[..], font), (&b"Helvetica-Bold"[..], bold)] {
            pdf.type1_font(id).base_font(Name(name)).encoding_predefined(Name(b"WinAnsiEncoding"));
        }
        for (lines, (page_id, content_id)) in pages.iter().zip(&ids) {
            let mut page = pdf.page(*page_id);
            page.media_box(Rect::new(0.0, 0.0, WIDTH, HEIGHT));
            page.parent(tree);
            page.contents(*content_id);
            page.resources().fonts().pair(Name(b"F1"), font).pair(Name(b"F2"), bold);
            page.finish();
            let mut content = Content::new();
            for (size, y, line) in lines {
                let face = if *size > 10.0 { Name(b"F2") } else { Name(b"F1") };
                content.begin_text();
                content.set_font(face, *size);
                content.next_line(MARGIN, *y);
                content.show(Str(&win_ansi(line)));
                content.end_text();
            }
            pdf.stream(*content_id, &content.finish());
        }
        pdf.finish()
    }
}

/// Lines of at most `width` characters, broken at spaces.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// The text in the standard fonts' WinAnsi encoding: Latin-1 and the typographic marks; any other
/// character becomes `?`.
fn win_ansi(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| match c {
            '€' => 0x80,
            '‚' => 0x82,
            '„' => 0x84,
            '…' => 0x85,
            '‘' => 0x91,
            '’' => 0x92,
            '“' => 0x93,
            '”' => 0x94,
            '–' => 0x96,
            '—' => 0x97,
            '→' => b'>',
            c if (c as u32) < 0x80 || (0xA0..=0xFF).contains(&(c as u32)) => c as u32 as u8,
            _ => b'?',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_wrap_at_spaces_and_accents_encode_as_win_ansi() {
        assert_eq!(wrap("one two three four", 9), ["one two", "three", "four"]);
        assert_eq!(win_ansi("é’…→日"), [0xE9, 0x92, 0x85, b'>', b'?']);
    }
}
