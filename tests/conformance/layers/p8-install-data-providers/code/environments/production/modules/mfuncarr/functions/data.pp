function mfuncarr::data() {
  ['mfuncarr::k', 1]
}
