//! Charts drawn on the server as SVG. Every chart names itself and says what it shows in words
//! (`title` and `desc`), writes its figures as text beside the marks, and uses one colour, so
//! that nothing depends on telling colours apart.

use maud::{Markup, html};

/// One mark: what it stands for and how many.
#[derive(Debug, Clone)]
pub struct Mark {
    pub label: String,
    pub value: i64,
}

const INK: &str = "#1a4fb0";
const RULE: &str = "#6b7075";

/// Columns in order, one per label (days, say), with the highest value written on the axis and
/// each column's value in its tooltip and in the description's summary.
pub fn columns(id: &str, title: &str, marks: &[Mark]) -> Markup {
    let (width, height, left, bottom, top) = (720.0_f64, 180.0_f64, 40.0_f64, 22.0_f64, 10.0_f64);
    let highest = marks.iter().map(|m| m.value).max().unwrap_or(0);
    let scale = if highest > 0 { (height - bottom - top) / highest as f64 } else { 0.0 };
    let slot = (width - left) / marks.len().max(1) as f64;
    let bar = (slot * 0.7).max(1.0);
    // Labels under the first column and at most about eight more.
    let every = marks.len().div_ceil(8).max(1);
    html! {
        svg role="img" aria-labelledby={ (id) "-t " (id) "-d" } viewBox={ "0 0 " (width) " " (height) } width="100%" {
            title id={ (id) "-t" } { (title) }
            desc id={ (id) "-d" } { (describe(marks)) }
            line x1=(left) y1=(height - bottom) x2=(width) y2=(height - bottom) stroke=(RULE) {}
            text x=(left - 4.0) y=(top + 4.0) text-anchor="end" { (highest) }
            text x=(left - 4.0) y=(height - bottom) text-anchor="end" { "0" }
            @for (index, mark) in marks.iter().enumerate() {
                @let x = left + index as f64 * slot + (slot - bar) / 2.0;
                @let h = mark.value as f64 * scale;
                rect x=(x) y=(height - bottom - h) width=(bar) height=(h) fill=(INK) {
                    title { (mark.label) ": " (mark.value) }
                }
                @if index % every == 0 {
                    text x=(x) y=(height - 6.0) { (mark.label) }
                }
            }
        }
    }
}

/// Horizontal bars, one per named share, with the name on the left and the figure on the right.
pub fn rows(id: &str, title: &str, marks: &[Mark]) -> Markup {
    let (width, row, label, figure) = (720.0_f64, 24.0_f64, 200.0_f64, 60.0_f64);
    let height = row * marks.len().max(1) as f64 + 4.0;
    let highest = marks.iter().map(|m| m.value).max().unwrap_or(0);
    let room = width - label - figure;
    html! {
        svg role="img" aria-labelledby={ (id) "-t " (id) "-d" } viewBox={ "0 0 " (width) " " (height) } width="100%" {
            title id={ (id) "-t" } { (title) }
            desc id={ (id) "-d" } { (describe(marks)) }
            @if marks.is_empty() {
                text x="0" y="16" { "Nothing in this period." }
            }
            @for (index, mark) in marks.iter().enumerate() {
                @let y = index as f64 * row + 4.0;
                @let length = if highest > 0 { mark.value as f64 / highest as f64 * room } else { 0.0 };
                text x="0" y=(y + 14.0) { (shorten(&mark.label)) }
                rect x=(label) y=(y + 2.0) width=(length.max(1.0)) height=(row - 8.0) fill=(INK) {}
                text x=(label + length + 6.0) y=(y + 14.0) { (mark.value) }
            }
        }
    }
}

/// The chart in words: the total, and the highest mark.
fn describe(marks: &[Mark]) -> String {
    let total: i64 = marks.iter().map(|m| m.value).sum();
    match marks.iter().max_by_key(|m| m.value).filter(|m| m.value > 0) {
        Some(top) => format!("{total} in all; the most, {}, for {}.", top.value, top.label),
        None => "None in this period.".to_owned(),
    }
}

/// A label that fits its room.
fn shorten(label: &str) -> String {
    if label.chars().count() <= 28 {
        label.to_owned()
    } else {
        format!("{}…", label.chars().take(27).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(values: &[i64]) -> Vec<Mark> {
        values.iter().enumerate().map(|(i, v)| Mark { label: format!("d{i}"), value: *v }).collect()
    }

    #[test]
    fn a_chart_says_in_words_what_it_shows() {
        let drawn = columns("c", "Refused attempts", &marks(&[1, 5, 2])).into_string();
        assert!(drawn.contains("<title id=\"c-t\">Refused attempts</title>"), "{drawn}");
        assert!(drawn.contains("8 in all; the most, 5, for d1."), "{drawn}");
        assert_eq!(drawn.matches("<rect").count(), 3);
        let empty = rows("r", "Countries", &[]).into_string();
        assert!(empty.contains("None in this period.") && empty.contains("Nothing in this period."));
    }

    #[test]
    fn bars_are_as_long_as_their_share_of_the_highest() {
        let drawn = rows("r", "Kinds", &marks(&[4, 2])).into_string();
        assert!(drawn.contains("width=\"460\""), "the highest takes the whole room: {drawn}");
        assert!(drawn.contains("width=\"230\""), "half of it: {drawn}");
    }
}
