//! QR codes as SVG, drawn by the service: the `otpauth://` URI of an authenticator app's
//! enrolment, scanned from the page with no script and no image fetched from elsewhere.

use std::fmt::Write as _;

use qrcodegen::{QrCode, QrCodeEcc};

/// Modules of quiet zone around the code, as the standard asks.
const BORDER: i32 = 4;

/// The QR code of `text` as an SVG document: one path of dark squares on a white square, scaled
/// by whoever shows it. Medium error correction (15 %), enough for a screen.
pub fn svg(text: &str) -> String {
    let Ok(code) = QrCode::encode_text(text, QrCodeEcc::Medium) else {
        // Longer than a QR code holds (about 2,300 characters of a URI at this level): the
        // secret is still shown as text beside it.
        return String::new();
    };
    let size = code.size() + 2 * BORDER;
    let mut path = String::with_capacity(16 * usize::try_from(code.size() * code.size()).unwrap_or(0) / 2);
    for y in 0..code.size() {
        for x in 0..code.size() {
            if code.get_module(x, y) {
                let _ = write!(path, "M{},{}h1v1h-1z", x + BORDER, y + BORDER);
            }
        }
    }
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {size} {size}\" shape-rendering=\"crispEdges\" \
         role=\"img\" aria-label=\"QR code\"><rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\
         <path d=\"{path}\" fill=\"#000\"/></svg>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_svg_holds_a_square_code_with_its_quiet_zone_and_finder_patterns() {
        let svg = svg("otpauth://totp/Acme:ada?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Acme");
        let view = svg.split("viewBox=\"0 0 ").nth(1).and_then(|rest| rest.split(' ').next()).unwrap();
        let size: i32 = view.parse().unwrap();
        // 17 + 4 × version modules, and the quiet zone on both sides.
        assert_eq!((size - 2 * BORDER - 17) % 4, 0, "{svg}");
        assert!(svg.contains(&format!("viewBox=\"0 0 {size} {size}\"")));
        // The top-left finder pattern: seven dark modules from the corner inside the quiet zone,
        // then a light one.
        let row: String = (4..11).map(|x| format!("M{x},4h1v1h-1z")).collect();
        assert!(svg.contains(&format!("d=\"{row}M1")), "{svg}");
        assert!(!svg.contains("M11,4h"), "{svg}");
        assert!(!svg.contains("<script"));
        assert_eq!(super::svg(&"x".repeat(3000)), "", "longer than a QR code holds");
    }
}
