# Sourced by the scripts that measure or picture the real window.
#
# need NAME TOOL…    exits with a line naming the Debian packages when a tool is missing
# start_xvfb NAME SIZE [DISPLAY]
#                    starts Xvfb at SIZE (WIDTHxHEIGHT) on DISPLAY (a number),
#                    or on the first free display from :110 to :129; exports
#                    DISPLAY and sets xvfb to its pid, for the caller's cleanup

need() {
  local name=$1 tool
  shift
  for tool in "$@"; do
    command -v "$tool" >/dev/null || {
      echo "$name: $tool is needed (apt-get install xvfb xdotool gcc libx11-dev libxtst6 imagemagick)"
      exit 1
    }
  done
}

start_xvfb() {
  local name=$1 size=$2 display=${3:-} d
  if [ -z "$display" ]; then
    for d in $(seq 110 129); do
      if [ ! -e "/tmp/.X$d-lock" ]; then display=$d; break; fi
    done
  fi
  [ -n "$display" ] || { echo "$name: no free X display in :110-:129"; exit 1; }
  Xvfb ":$display" -screen 0 "${size}x24" -nolisten tcp >/dev/null 2>&1 &
  xvfb=$!
  export DISPLAY=":$display"
  sleep 1
}
