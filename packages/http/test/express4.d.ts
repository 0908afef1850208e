// express@4 installed under an alias, for the Express 4 run of the suite; its API is the same
// for what the harness uses.
declare module 'express4' {
  import express from 'express';
  export default express;
}
