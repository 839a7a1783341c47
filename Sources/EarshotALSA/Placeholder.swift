enum EarshotALSAPlaceholder {}
