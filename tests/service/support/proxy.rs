//! Cutting the network between the service and a server it depends on.

/// A TCP proxy on loopback in front of a server (a database, Redis), which the test can cut: it stops taking
/// connections and drops those it carries, as a network failure or a stopped server would.
pub struct Proxy {
    pub address: std::net::SocketAddr,
    cut: tokio::sync::watch::Sender<bool>,
}

impl Proxy {
    pub async fn to(upstream: String) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (cut, mut watching) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    accepted = listener.accept() => accepted,
                    _ = watching.changed() => return,
                };
                let Ok((mut inbound, _)) = accepted else { return };
                let upstream = upstream.clone();
                let mut carried = watching.clone();
                tokio::spawn(async move {
                    let Ok(mut outbound) = tokio::net::TcpStream::connect(&upstream).await else { return };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = carried.changed() => {}
                    }
                });
            }
        });
        Self { address, cut }
    }

    pub fn cut(&self) {
        self.cut.send_replace(true);
    }
}
