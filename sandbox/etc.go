package sandbox

// What of /etc a command reads: what the C library, the dynamic linker,
// name resolution, locales, time zones, TLS and the usual runtimes (sh,
// node, python, git) look for. Everything else there is closed: the
// shadow files, sudoers, ssh host keys, TLS private keys, saved Wi-Fi and
// VPN secrets, Kerberos keytabs, machine-id.
var etcFiles = []string{
	"/etc/hosts", "/etc/hostname", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/host.conf",
	"/etc/passwd", "/etc/group", "/etc/localtime", "/etc/timezone",
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.preload",
	"/etc/os-release", "/etc/lsb-release", "/etc/debian_version", "/etc/alpine-release", "/etc/fedora-release", "/etc/redhat-release",
	"/etc/mime.types", "/etc/protocols", "/etc/services", "/etc/networks", "/etc/shells", "/etc/inputrc",
	"/etc/locale.alias", "/etc/locale.conf", "/etc/default/locale",
	"/etc/npmrc", "/etc/gitconfig", "/etc/magic", "/etc/mailcap", "/etc/environment",
	"/etc/ssl/openssl.cnf",
}

// etcDirs are the folders of /etc read whole: links to programs,
// certificate authorities (public), fonts, terminal descriptions.
var etcDirs = []string{
	"/etc/ld.so.conf.d", "/etc/alternatives", "/etc/ssl/certs", "/etc/ca-certificates", "/etc/pki/tls/certs",
	"/etc/pki/ca-trust", "/etc/crypto-policies", "/etc/fonts", "/etc/terminfo", "/etc/java-17-openjdk",
}
